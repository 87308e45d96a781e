// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Skiff",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "SkiffCore", targets: ["SkiffCore"]),
        .library(name: "SkiffClient", targets: ["SkiffClient"]),
        .library(name: "SkiffHTTPClient", targets: ["SkiffHTTPClient"]),
        .library(name: "SkiffServer", targets: ["SkiffServer"]),
        .library(name: "SkiffGRPC", targets: ["SkiffGRPC"]),
        .library(name: "SkiffStandardServices", targets: ["SkiffStandardServices"]),
        .library(name: "SkiffAPI", targets: ["SkiffAPI"]),
        .library(name: "SkiffLoad", targets: ["SkiffLoad"]),
        .library(name: "SkiffTesting", targets: ["SkiffTesting"]),
        .executable(name: "skiff-server", targets: ["skiff-server"]),
        .executable(name: "protoc-gen-skiff", targets: ["protoc-gen-skiff"]),
        .executable(name: "skiff", targets: ["skiff"]),
        .executable(name: "skiff-load", targets: ["skiff-load"]),
        .plugin(name: "GenerateCode", targets: ["GenerateCode"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-protobuf.git", exact: "1.39.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", exact: "0.2.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: [
        // I/O-free core: status codes, errors, metadata, descriptors, handler and interceptor protocols, the call runner.
        .target(
            name: "SkiffCore",
            dependencies: [
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The one test kit every test target uses: status expectations, waits, temporary files.
        .target(
            name: "SkiffTesting",
            dependencies: [
                "SkiffCore",
                "SkiffDomain",
                "SkiffFeed",
                "SkiffAPI",
                "SkiffClient",
                "SkiffServer",
                "SkiffAccounts",
                "SkiffServerApp",
                "SkiffStandardServices",
                "SkiffPostgres",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The wire codec and frame model, on NIOCore only.
        .target(
            name: "SkiffWire",
            dependencies: [
                "SkiffCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: swiftSettings
        ),
        // The server runtime on NIOPosix.
        .target(
            name: "SkiffServer",
            dependencies: [
                "SkiffCore",
                "SkiffWire",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: swiftSettings
        ),
        // gRPC over HTTP/2 as a server protocol plugin, on swift-nio-http2.
        .target(
            name: "SkiffGRPC",
            dependencies: [
                "SkiffCore",
                "SkiffWire",
                "SkiffServer",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: swiftSettings
        ),
        // The client runtime: what an app adds. No server-only dependencies.
        .target(
            name: "SkiffClient",
            dependencies: [
                "SkiffCore",
                "SkiffWire",
                // The health service's messages, for BalancedClientTransport's health checks (client-safe:
                // SkiffCore and SwiftProtobuf only).
                "SkiffStandardServices",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: swiftSettings
        ),
        // A client transport speaking gRPC, gRPC-Web or Connect over one HTTP/2 connection. No server code.
        .target(
            name: "SkiffHTTPClient",
            dependencies: [
                "SkiffCore",
                "SkiffWire",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: swiftSettings
        ),
        // Generated code and implementations of the runtime's own services (conformance, health).
        .target(
            name: "SkiffStandardServices",
            dependencies: [
                "SkiffCore",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: swiftSettings
        ),
        // Generated messages, service protocols and typed clients of the campus-app services.
        .target(
            name: "SkiffAPI",
            dependencies: [
                "SkiffCore",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: swiftSettings
        ),
        // The code generator as a library, and the thin protoc plugin over it.
        .target(
            name: "SkiffCodeGen",
            dependencies: [
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "SwiftProtobufPluginLibrary", package: "swift-protobuf"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "protoc-gen-skiff",
            dependencies: [
                "SkiffCodeGen",
                .product(name: "SwiftProtobufPluginLibrary", package: "swift-protobuf"),
            ],
            swiftSettings: swiftSettings
        ),
        // The server application: configuration, wiring, lifecycle. The executable is thin over it.
        .target(
            name: "SkiffServerApp",
            dependencies: [
                "SkiffCore",
                "SkiffServer",
                "SkiffClient",
                "SkiffGRPC",
                "SkiffStandardServices",
                "SkiffDomain",
                "SkiffFeed",
                "SkiffAccounts",
                "SkiffListings",
                "SkiffBids",
                "SkiffChat",
                "SkiffLostFound",
                "SkiffBucketList",
                "SkiffAPI",
                "SkiffSQLite",
                "SkiffPostgres",
                "SkiffReflection",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                "SkiffWire",
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "skiff-server",
            dependencies: ["SkiffServerApp"],
            swiftSettings: swiftSettings
        ),
        // A quick benchmark for development; the full load harness is skiff-load.
        .executableTarget(
            name: "skiff-bench",
            dependencies: [
                "SkiffCore",
                "SkiffClient",
                "SkiffServer",
                "SkiffStandardServices",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: swiftSettings
        ),
        // The load-test harness as a library (public client API only), and the thin executable.
        .target(
            name: "SkiffLoad",
            dependencies: [
                "SkiffCore",
                "SkiffClient",
                "SkiffHTTPClient",
                "SkiffAPI",
                "SkiffStandardServices",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "skiff-load",
            dependencies: ["SkiffLoad"],
            swiftSettings: swiftSettings
        ),
        // Domain primitives shared by every service: errors, ids, time, paging. No I/O.
        .target(
            name: "SkiffDomain",
            dependencies: [
                "SkiffCore",
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: swiftSettings
        ),
        // The live-feed contract between the services that notify users and Chat, which owns the feed.
        .target(
            name: "SkiffFeed",
            swiftSettings: swiftSettings
        ),
        // Accounts: domain rules, the store protocol and its in-memory store, password hashing.
        .target(
            name: "SkiffAccounts",
            dependencies: [
                "SkiffCore",
                "SkiffDomain",
                "SkiffAPI",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            swiftSettings: swiftSettings
        ),
        // Listings: domain rules, the store protocol and its in-memory store, search, images, watchers;
        // the ZIP-code centroid table (public-domain Census data, see `ZipCentroids`).
        .target(
            name: "SkiffListings",
            dependencies: [
                "SkiffCore",
                "SkiffDomain",
                "SkiffFeed",
                "SkiffAPI",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Resources/zip-centroids.csv")],
            swiftSettings: swiftSettings
        ),
        // Bids: bids, counter-offers, sales and hand-offs; the store protocol and its in-memory store.
        .target(
            name: "SkiffBids",
            dependencies: [
                "SkiffCore",
                "SkiffDomain",
                "SkiffFeed",
                "SkiffAPI",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Chat: conversations, messages, blocks and every user's live feed; the store protocol and its
        // in-memory store.
        .target(
            name: "SkiffChat",
            dependencies: [
                "SkiffCore",
                "SkiffDomain",
                "SkiffFeed",
                "SkiffAPI",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // LostFound: lost and found items, search, matching; the store protocol and its in-memory store.
        .target(
            name: "SkiffLostFound",
            dependencies: [
                "SkiffCore",
                "SkiffDomain",
                "SkiffFeed",
                "SkiffAPI",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // BucketList: activities, votes, comments, bucket lists and follows; the store protocol and its
        // in-memory store.
        .target(
            name: "SkiffBucketList",
            dependencies: [
                "SkiffCore",
                "SkiffDomain",
                "SkiffAPI",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: swiftSettings
        ),
        // The SQLite (GRDB) backend for every service's store.
        .target(
            name: "SkiffSQLite",
            dependencies: [
                "SkiffDomain",
                "SkiffFeed",
                "SkiffAccounts",
                "SkiffBids",
                "SkiffListings",
                "SkiffChat",
                "SkiffLostFound",
                "SkiffBucketList",
                "CSkiffSQLite",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: swiftSettings
        ),
        // The one SQLite setting Swift cannot make itself (`sqlite3_config` is variadic).
        .target(
            name: "CSkiffSQLite",
            linkerSettings: [.linkedLibrary("sqlite3")]
        ),
        // The PostgreSQL backend: a connection pool, versioned migrations under an advisory lock, the stores.
        .target(
            name: "SkiffPostgres",
            dependencies: [
                "SkiffDomain",
                "SkiffFeed",
                "SkiffAccounts",
                "SkiffBids",
                "SkiffListings",
                "SkiffChat",
                "SkiffLostFound",
                "SkiffBucketList",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Server reflection, the descriptor registry and the descriptor-driven JSON transcoder (client-safe).
        .target(
            name: "SkiffReflection",
            dependencies: [
                "SkiffCore",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: swiftSettings
        ),
        // The `skiff` command-line client as a library; the executable is thin over it.
        .target(
            name: "SkiffCLI",
            dependencies: [
                "SkiffCore",
                "SkiffClient",
                "SkiffHTTPClient",
                "SkiffReflection",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "skiff",
            dependencies: ["SkiffCLI"],
            swiftSettings: swiftSettings
        ),
        .plugin(
            name: "GenerateCode",
            capability: .command(
                intent: .custom(verb: "generate-code", description: "Regenerate Swift code from Protos/"),
                permissions: [.writeToPackageDirectory(reason: "Writes generated sources under Sources/")]
            )
        ),
        .testTarget(
            name: "SkiffCoreTests",
            dependencies: ["SkiffCore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SkiffWireTests",
            dependencies: [
                "SkiffTesting",
                "SkiffCore",
                "SkiffWire",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SkiffGRPCTests",
            dependencies: [
                "SkiffGRPC",
                "SkiffTesting",
                "SkiffReflection",
                "SkiffAPI",
                "SkiffCore",
                "SkiffServer",
                "SkiffClient",
                "SkiffStandardServices",
                "SkiffServerApp",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                "SkiffWire",
            ],
            exclude: ["Interop", "Browser"],
            swiftSettings: swiftSettings
        ),
        // The HTTP client transport: its wire rules without I/O, and every protocol against a real server.
        .testTarget(
            name: "SkiffHTTPClientTests",
            dependencies: [
                "SkiffHTTPClient",
                "SkiffGRPC",
                "SkiffTesting",
                "SkiffCore",
                "SkiffServer",
                "SkiffStandardServices",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SkiffServerTests",
            dependencies: [
                "SkiffTesting",
                "SkiffAPI",
                "SkiffAccounts",
                "SkiffCore",
                "SkiffWire",
                "SkiffServer",
                "SkiffClient",
                "SkiffStandardServices",
                "SkiffServerApp",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SkiffClientTests",
            dependencies: [
                "SkiffTesting",
                "SkiffCore",
                "SkiffWire",
                "SkiffClient",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SkiffServicesTests",
            dependencies: [
                "SkiffTesting",
                "SkiffCore",
                "SkiffAPI",
                "SkiffAccounts",
                "SkiffListings",
                "SkiffChat",
                "SkiffBucketList",
                "SkiffBids",
                "SkiffLostFound",
                "SkiffDomain",
                "SkiffClient",
                "SkiffServer",
                "SkiffServerApp",
                "SkiffSQLite",
                "SkiffStandardServices",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SkiffCodeGenTests",
            dependencies: [
                "SkiffTesting",
                "SkiffCodeGen",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "SwiftProtobufPluginLibrary", package: "swift-protobuf"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SkiffAccountsTests",
            dependencies: [
                "SkiffTesting",
                "SkiffCore",
                "SkiffDomain",
                "SkiffAccounts",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SkiffListingsTests",
            dependencies: [
                "SkiffTesting",
                "SkiffCore",
                "SkiffDomain",
                "SkiffFeed",
                "SkiffAPI",
                "SkiffListings",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: swiftSettings
        ),
        // One store-conformance suite per service, run against every backend.
        .testTarget(
            name: "SkiffStorageTests",
            dependencies: [
                "SkiffTesting",
                "SkiffDomain",
                "SkiffFeed",
                "SkiffChat",
                "SkiffAccounts",
                "SkiffBids",
                "SkiffListings",
                "SkiffLostFound",
                "SkiffBucketList",
                "SkiffSQLite",
                "SkiffPostgres",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SkiffBucketListTests",
            dependencies: [
                "SkiffTesting",
                "SkiffCore",
                "SkiffDomain",
                "SkiffBucketList",
            ],
            swiftSettings: swiftSettings
        ),
        // The Chat service in process, through its generated typed client.
        .testTarget(
            name: "SkiffChatTests",
            dependencies: [
                "SkiffTesting",
                "SkiffCore",
                "SkiffDomain",
                "SkiffFeed",
                "SkiffAPI",
                "SkiffChat",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: swiftSettings
        ),
        // LostFound's rules, matching and service (with a recording feed publisher), in process.
        .testTarget(
            name: "SkiffLostFoundTests",
            dependencies: [
                "SkiffTesting",
                "SkiffCore",
                "SkiffDomain",
                "SkiffFeed",
                "SkiffAPI",
                "SkiffLostFound",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The Bids service in process, through its generated typed client.
        .testTarget(
            name: "SkiffBidsTests",
            dependencies: [
                "SkiffTesting",
                "SkiffCore",
                "SkiffDomain",
                "SkiffFeed",
                "SkiffAPI",
                "SkiffBids",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The load harness against an in-process server.
        .testTarget(
            name: "SkiffLoadTests",
            dependencies: [
                "SkiffTesting",
                "SkiffLoad",
                "SkiffCore",
                "SkiffAPI",
                "SkiffClient",
                "SkiffServer",
                "SkiffServerApp",
                "SkiffStandardServices",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The `skiff` CLI, its transcoder and the reflection service, end to end against a real server.
        .testTarget(
            name: "SkiffCLITests",
            dependencies: [
                "SkiffTesting",
                "SkiffCore",
                "SkiffCLI",
                "SkiffReflection",
                "SkiffClient",
                "SkiffAPI",
                "SkiffAccounts",
                "SkiffStandardServices",
                "SkiffServerApp",
                "SkiffServer",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
