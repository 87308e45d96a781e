/// One step of the PostgreSQL schema: SQL statements run in order, once per database.
///
/// - Important: A migration never changes once it has shipped: databases in the field have already run
///   it. To change the schema, append a new migration (`accounts-v2`) and leave the old ones as they are.
///   Migrations are SQL only, never app types, so later code cannot change what an old one does.
struct PostgresMigration: Sendable {
    /// `<service>-v<N>`.
    let id: String
    /// The statements (one each: the extended query protocol runs one statement at a time).
    let statements: [String]
}

/// The schema of a Skiff PostgreSQL database: every service's migrations, in the order they run.
///
/// Conventions: instants are `bigint` milliseconds since 1970 (as on SQLite, so both backends round
/// alike); ids and tokens are `text`; JSON-free, one column per field.
enum PostgresSchema {
    /// Every migration, in order.
    static var migrations: [PostgresMigration] {
        accountsMigrations + chatMigrations + bidsMigrations + listingsMigrations + lostFoundMigrations
            + bucketListMigrations
    }

    /// `skiff_grid_cell_key(latitude, longitude)`: ``SkiffDomain/ApproximateLocation/Cell/key`` of the cell
    /// holding a point, Swift's operations in Swift's order on `double precision` (NULL without a point).
    /// Made by "listings-v2" and "lostfound-v2" alike (`CREATE OR REPLACE`), whichever runs first; the text
    /// never changes (migrations that shipped never do).
    static let gridCellKeyFunction = """
        CREATE OR REPLACE FUNCTION skiff_grid_cell_key(latitude double precision, longitude double precision)
        RETURNS bigint
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        AS $$
            SELECT floor(latitude / 0.01::float8)::bigint * 1000000 + floor((longitude + 180::float8)
                / (0.01::float8 / greatest(cos(least(90::float8, greatest(-90::float8,
                    (floor(latitude / 0.01::float8) + 0.5::float8) * 0.01::float8)) * pi() / 180::float8),
                    0.01::float8)))::bigint
        $$
        """
}
