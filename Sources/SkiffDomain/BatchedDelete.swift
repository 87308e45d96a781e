/// How stores delete what housekeeping prunes (expired sessions and tokens, old feed events, old listing
/// changes): in batches, so one prune holds a writer, a transaction and their memory for one batch at a
/// time, however many rows have expired, and other writes take turns between the batches.
public enum BatchedDelete {
    /// The most rows one batch deletes.
    public static let batchSize = 1_000

    /// Runs `batch` with the batch size until it deletes fewer rows than that; returns how many it deleted
    /// in all. `batch` deletes at most the rows it is given (in its own write) and returns how many.
    public static func run(
        batchSize: Int = BatchedDelete.batchSize,
        _ batch: (Int) async throws -> Int
    ) async throws -> Int {
        var deleted = 0
        while true {
            let count = try await batch(batchSize)
            deleted += count
            if count < batchSize { return deleted }
        }
    }
}
