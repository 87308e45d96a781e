extension PostgresSchema {
    /// The LostFound service's tables.
    static let lostFoundMigrations: [PostgresMigration] = []
}
