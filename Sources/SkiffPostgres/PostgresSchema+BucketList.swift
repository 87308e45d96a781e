extension PostgresSchema {
    /// The BucketList service's tables.
    static let bucketListMigrations: [PostgresMigration] = []
}
