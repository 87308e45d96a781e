/// The first `limit` of the values offered, in order (all of them, when `limit` is `Int.max`): a value
/// that cannot be among them costs one comparison.
struct BestValues<Value> {
    let limit: Int
    let precedes: (Value, Value) -> Bool
    private(set) var values: [Value] = []

    init(limit: Int, by precedes: @escaping (Value, Value) -> Bool) {
        self.limit = limit
        self.precedes = precedes
    }

    mutating func offer(_ value: Value) {
        if limit == .max {
            values.append(value)
            return
        }
        if values.count == limit, !precedes(value, values[limit - 1]) { return }
        var low = 0
        var high = values.count
        while low < high {
            let middle = (low + high) / 2
            if precedes(value, values[middle]) { high = middle } else { low = middle + 1 }
        }
        values.insert(value, at: low)
        if values.count > limit { values.removeLast() }
    }

    /// The values kept, in order.
    mutating func ordered() -> [Value] {
        if limit == .max { values.sort(by: precedes) }
        return values
    }
}
