import Prometheus

/// Every series the registry's page has, by its name and help, written once: each is made from here wherever it is
/// counted or read, and docs/registry.md lists them for the operator. Names are written out whole, to be found by
/// grep. Computed, as swift-prometheus's descriptor is not `Sendable`; a series is made once and kept, or made on
/// a scrape.
extension RegistryMetrics {
    static func name(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }

    // Counted as it happens (`RegistryMetrics`).
    static var buildInfo: MetricNameDescriptor {
        name("bike_registry_build_info", "Always 1; the label says which bike-registry this is.")
    }
    static var requestDuration: MetricNameDescriptor {
        name(
            "http_server_request_duration_seconds",
            "Requests answered, by method, route (its template; unmatched for any path no route takes) and status.")
    }
    static var requestsInFlightName: MetricNameDescriptor {
        name("http_server_active_requests", "Requests being answered now.")
    }
    static var sightings: MetricNameDescriptor {
        name(
            "bike_registry_sightings_received_total",
            "Sightings posted, by outcome: refused, duplicate, unverified_rotating, clock_not_believed, else stored.")
    }
    static var notifications: MetricNameDescriptor {
        name(
            "bike_registry_notifications_total",
            "Delivery attempts by channel and outcome: delivered, retried, refused (for good), abandoned (after three days)."
        )
    }
    static var deliveryDuration: MetricNameDescriptor {
        name(
            "bike_registry_notification_delivery_duration_seconds", "How long one delivery attempt took, by channel.")
    }
    static var limitRefusals: MetricNameDescriptor {
        name(
            "bike_registry_limit_refusals_total", "Requests refused by a limit, by the limit's name.")
    }
    static var listEncodings: MetricNameDescriptor {
        name(
            "bike_registry_station_list_encodings_total",
            "Times the stations' list was encoded: once per version and, with rotating bikes, once per window.")
    }
    static var storeDuration: MetricNameDescriptor {
        name(
            "bike_registry_store_operation_duration_seconds",
            "Database operations, by kind: read, write, snapshot, transaction, sighting_batch (PostgreSQL).")
    }
    static var storeErrorsName: MetricNameDescriptor {
        name(
            "bike_registry_store_errors_total",
            "Database operations failed, by kind: unavailable, timeout, busy, conflict, constraint, storage, other.")
    }
    static var storeInFlightName: MetricNameDescriptor {
        name(
            "bike_registry_store_operations_in_flight",
            "Database operations under way, each holding a pool's connection or waiting for one.")
    }

    // Read when scraped (`RegistryFigures`).
    static var ready: MetricNameDescriptor {
        name(
            "bike_registry_ready", "1 while /readyz says ready (the database takes a write, not stopping), else 0.")
    }
    static var storeConnections: MetricNameDescriptor {
        name(
            "bike_registry_store_connections_max", "Connections the store may hold at once (--database-connections).")
    }
    static var primary: MetricNameDescriptor {
        name(
            "bike_registry_store_primary", "1 for the PostgreSQL host the store's operations go to now.")
    }
    static var bikes: MetricNameDescriptor { name("bike_registry_bikes", "Bikes registered.") }
    static var missingBikes: MetricNameDescriptor {
        name("bike_registry_missing_bikes", "Bikes with a missing report open.")
    }
    static var reportsMade: MetricNameDescriptor {
        name(
            "bike_registry_missing_reports_made_total", "Missing reports made, of bikes still registered.")
    }
    static var reportsLapsed: MetricNameDescriptor {
        name(
            "bike_registry_missing_reports_lapsed_total", "Missing reports closed because nobody renewed them.")
    }
    static var listBytes: MetricNameDescriptor {
        name(
            "bike_registry_station_list_bytes",
            "Size of the stations' list as GET /bikes sends it now, by encoding: identity, gzip.")
    }
    static var listIdentities: MetricNameDescriptor {
        name(
            "bike_registry_station_list_identities",
            "Rotating beacons' identities in the stations' list now (a rotating bike is listed by each of its window's)."
        )
    }
    static var owed: MetricNameDescriptor {
        name("bike_registry_notifications_owed", "Messages owed and not yet delivered, by channel.")
    }
    static var oldestOwed: MetricNameDescriptor {
        name(
            "bike_registry_notifications_oldest_owed_age_seconds",
            "Age of the oldest message owed, by channel (absent for a channel that owes none).")
    }
    static var failingTargets: MetricNameDescriptor {
        name(
            "bike_registry_notification_targets_failing",
            "Owners' targets a channel refused for good (a relay's 5xx), by channel: nothing goes to them until changed."
        )
    }
    static var lastRefresh: MetricNameDescriptor {
        name(
            "bike_registry_station_last_refresh_timestamp_seconds",
            "When each station last fetched the list, by its name (absent until it has).")
    }
    static var lastSighting: MetricNameDescriptor {
        name(
            "bike_registry_station_last_sighting_timestamp_seconds",
            "When each station's latest sighting kept was received, by its name (absent until it has one).")
    }
    static var stations: MetricNameDescriptor {
        name(
            "bike_registry_stations",
            "Unrevoked stations by state: listening (fetched the list in the last hour) or silent.")
    }

    /// OpenTelemetry's advice for HTTP servers' durations, in seconds.
    static let requestBuckets: [Duration] = [
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(75),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .milliseconds(750), .seconds(1),
        .milliseconds(2500), .seconds(5), .milliseconds(7500), .seconds(10),
    ]
    /// A delivery's deadline is 15 s by default (`--delivery-timeout`, up to 600).
    static let deliveryBuckets: [Duration] = [
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2),
        .seconds(5), .seconds(10), .seconds(15), .seconds(30), .seconds(60),
    ]
    /// A store operation's deadline is 5 s on PostgreSQL; SQLite's writer waits up to 10 s for its lock.
    static let storeBuckets: [Duration] = [
        .microseconds(250), .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10),
        .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
    ]
}
