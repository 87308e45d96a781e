extension PostgresSchema {
    /// The Listings service's tables.
    static let listingsMigrations: [PostgresMigration] = []
}
