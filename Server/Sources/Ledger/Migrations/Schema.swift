import OrderSafeModel
import SQLKit

/// Every migration of the ledger, oldest first.
enum Schema {
    static let migrations: [Migration] = [
        initial, reversals, webhookDeliveries, providerPeriods, inboxVerdicts, sandboxOrders, waitingReversals,
        subscriptionChains,
        operatorConsole, fewerPaymentIndexes, leanerPostgresInserts, paymentConflicts, subscriptionSignals,
        subscriptionStates, statementRuns, reversalsByDay, offers, freeOfferPeriods, appPurchases, channelNames,
        inboxSegments, indexesOfWhatIsAsked, checksWithoutTemporaryTables,
    ]

    static var latestVersion: Int { migrations.last?.version ?? 0 }

    /// Triggers that refuse every UPDATE and DELETE of `table`, on each engine.
    private static func appendOnly(_ table: String) -> [SQLEngine: [String]] {
        [
            .sqlite: [
                """
                CREATE TRIGGER \(table)_no_update BEFORE UPDATE ON \(table)
                BEGIN SELECT RAISE(ABORT, '\(table) is append-only'); END
                """,
                """
                CREATE TRIGGER \(table)_no_delete BEFORE DELETE ON \(table)
                BEGIN SELECT RAISE(ABORT, '\(table) is append-only'); END
                """,
            ],
            .postgres: [
                """
                CREATE FUNCTION \(table)_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN RAISE EXCEPTION '\(table) is append-only'; END $$
                """,
                """
                CREATE TRIGGER \(table)_append_only BEFORE UPDATE OR DELETE ON \(table)
                FOR EACH ROW EXECUTE FUNCTION \(table)_append_only()
                """,
            ],
        ]
    }

    private static let statuses =
        "'created','paying','paid','fulfilled','cancelled','closed','failed','refunded','revoked','flagged'"
    /// The channel names the `channel` columns first admitted: history, as every migration is (since
    /// ``channelNames`` they admit any channel's name).
    private static let channels = "'appstore','alipay','wechatpay'"
    /// The values a column of a Swift kind may hold, as SQL's `IN` list: the schema and the code share one list.
    private static func values<Kind: RawRepresentable & CaseIterable>(of _: Kind.Type) -> String
    where Kind.RawValue == String {
        Kind.allCases.map { "'\($0.rawValue)'" }.joined(separator: ",")
    }
    private static let causes = values(of: EventCause.self)
    private static let grantKinds = values(of: Grant.Kind.self)
    private static let signalKinds = values(of: SubscriptionSignal.Kind.self)
    private static let subscriptionStateNames = values(of: SubscriptionState.self)

    private static let initial = Migration(
        version: 1, name: "initial ledger",
        statements: [
            """
            CREATE TABLE catalog_versions (
                id {ID},
                label TEXT NOT NULL,
                sha256 TEXT NOT NULL UNIQUE,
                document TEXT NOT NULL,
                loaded_at BIGINT NOT NULL
            )
            """,
            """
            CREATE TABLE products (
                catalog_version_id BIGINT NOT NULL REFERENCES catalog_versions(id),
                product_id TEXT NOT NULL,
                kind TEXT NOT NULL,
                app_store_product_id TEXT,
                definition TEXT NOT NULL,
                PRIMARY KEY (catalog_version_id, product_id)
            )
            """,
            """
            CREATE TABLE orders (
                id {ID},
                order_no TEXT NOT NULL UNIQUE,
                order_uuid TEXT NOT NULL UNIQUE,
                user_id TEXT NOT NULL,
                product_id TEXT NOT NULL,
                catalog_version_id BIGINT NOT NULL REFERENCES catalog_versions(id),
                channel TEXT NOT NULL CHECK (channel IN (\(channels))),
                status TEXT NOT NULL CHECK (status IN (\(statuses))),
                amount_minor BIGINT NOT NULL CHECK (amount_minor > 0),
                currency TEXT NOT NULL CHECK (length(currency) = 3),
                origin TEXT NOT NULL CHECK (origin IN ('api','adopted')),
                idempotency_key TEXT,
                request_sha256 TEXT,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                UNIQUE (user_id, idempotency_key),
                UNIQUE (id, user_id),
                FOREIGN KEY (catalog_version_id, product_id) REFERENCES products(catalog_version_id, product_id)
            )
            """,
            "CREATE INDEX orders_by_user ON orders (user_id, created_at)",
            "CREATE INDEX orders_by_status ON orders (status, updated_at)",
            """
            CREATE TABLE payment_transactions (
                id {ID},
                channel TEXT NOT NULL CHECK (channel IN (\(channels))),
                provider_txn_id TEXT NOT NULL,
                order_id BIGINT NOT NULL,
                user_id TEXT NOT NULL,
                amount_minor BIGINT NOT NULL,
                currency TEXT NOT NULL,
                cause TEXT NOT NULL CHECK (cause IN (\(causes))),
                evidence TEXT NOT NULL,
                recorded_at BIGINT NOT NULL,
                UNIQUE (channel, provider_txn_id),
                UNIQUE (id, user_id),
                FOREIGN KEY (order_id, user_id) REFERENCES orders(id, user_id)
            )
            """,
            "CREATE INDEX payment_transactions_by_order ON payment_transactions (order_id)",
            """
            CREATE TABLE grants (
                id {ID},
                payment_transaction_id BIGINT NOT NULL,
                grant_index INTEGER NOT NULL,
                user_id TEXT NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN (\(grantKinds))),
                target TEXT NOT NULL,
                amount BIGINT,
                period TEXT,
                expires_at BIGINT,
                reversed_at BIGINT,
                created_at BIGINT NOT NULL,
                UNIQUE (payment_transaction_id, grant_index),
                FOREIGN KEY (payment_transaction_id, user_id) REFERENCES payment_transactions(id, user_id)
            )
            """,
            """
            CREATE TABLE balances (
                user_id TEXT NOT NULL,
                name TEXT NOT NULL,
                amount BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                PRIMARY KEY (user_id, name)
            )
            """,
            """
            CREATE TABLE entitlements (
                user_id TEXT NOT NULL,
                name TEXT NOT NULL,
                expires_at BIGINT,
                updated_at BIGINT NOT NULL,
                PRIMARY KEY (user_id, name)
            )
            """,
            """
            CREATE TABLE order_events (
                id {ID},
                order_id BIGINT NOT NULL REFERENCES orders(id),
                kind TEXT NOT NULL,
                from_status TEXT,
                to_status TEXT,
                cause TEXT NOT NULL CHECK (cause IN (\(causes))),
                evidence TEXT,
                detail TEXT,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX order_events_by_order ON order_events (order_id, id)",
            """
            CREATE TABLE inbox (
                id {ID},
                channel TEXT NOT NULL CHECK (channel IN (\(channels))),
                kind TEXT NOT NULL,
                body_sha256 TEXT NOT NULL,
                headers TEXT NOT NULL,
                body {BLOB} NOT NULL,
                received_at BIGINT NOT NULL,
                processed_at BIGINT,
                attempts INTEGER NOT NULL DEFAULT 0,
                last_error TEXT,
                UNIQUE (channel, kind, body_sha256)
            )
            """,
            "CREATE INDEX inbox_unprocessed ON inbox (processed_at, received_at)",
            """
            CREATE TABLE jobs (
                id {ID},
                kind TEXT NOT NULL,
                dedupe_key TEXT NOT NULL,
                payload TEXT NOT NULL,
                run_at BIGINT NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                lease_owner TEXT,
                lease_until BIGINT,
                fence BIGINT NOT NULL DEFAULT 0,
                done_at BIGINT,
                last_error TEXT,
                created_at BIGINT NOT NULL,
                UNIQUE (kind, dedupe_key)
            )
            """,
            "CREATE INDEX jobs_due ON jobs (done_at, run_at)",
            """
            CREATE TABLE webhook_outbox (
                id {ID},
                event_id TEXT NOT NULL UNIQUE,
                event_type TEXT NOT NULL,
                order_id BIGINT REFERENCES orders(id),
                payload TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                next_attempt_at BIGINT NOT NULL,
                delivered_at BIGINT,
                last_error TEXT
            )
            """,
            "CREATE INDEX webhook_outbox_due ON webhook_outbox (delivered_at, next_attempt_at)",
        ],
        engineStatements: appendOnly("order_events"))

    /// A payment's refund or revocation is recorded on the payment itself, so it happens once.
    private static let reversals = Migration(
        version: 2, name: "payment reversals",
        statements: [
            "ALTER TABLE payment_transactions ADD COLUMN reversed_at BIGINT",
            "ALTER TABLE payment_transactions ADD COLUMN reversal TEXT CHECK (reversal IN ('refunded','revoked'))",
        ])

    /// Every delivery attempt of a merchant webhook, for the delivery log.
    private static let webhookDeliveries = Migration(
        version: 3, name: "webhook delivery log",
        statements: [
            """
            CREATE TABLE webhook_attempts (
                id {ID},
                outbox_id BIGINT NOT NULL REFERENCES webhook_outbox(id),
                attempt INTEGER NOT NULL,
                attempted_at BIGINT NOT NULL,
                status_code INTEGER,
                error TEXT,
                duration_ms BIGINT NOT NULL
            )
            """,
            "CREATE INDEX webhook_attempts_by_event ON webhook_attempts (outbox_id, id)",
        ])

    /// The end of a subscription period as the provider dated it (App Store `expiresDate`), kept on the grant so a
    /// refund of one period falls back to the others and an extension by the provider is applied once.
    private static let providerPeriods = Migration(
        version: 4, name: "provider-dated subscription periods",
        statements: ["ALTER TABLE grants ADD COLUMN provider_period_end BIGINT"])

    /// Why an inbox entry is done: `refused` marks unauthenticated bytes (a signature or format that failed), kept
    /// truncated and only for a while, so traffic nobody signed cannot fill the disk.
    private static let inboxVerdicts = Migration(
        version: 5, name: "inbox verdicts",
        statements: [
            "ALTER TABLE inbox ADD COLUMN verdict TEXT",
            "CREATE INDEX inbox_by_verdict ON inbox (verdict, id)",
        ])

    /// Orders paid in a provider's test environment (App Store Sandbox purchases that App Review makes against a
    /// production server): fulfilled as usual, never counted as revenue.
    private static let sandboxOrders = Migration(
        version: 6, name: "sandbox orders",
        statements: ["ALTER TABLE orders ADD COLUMN sandbox BOOLEAN NOT NULL DEFAULT FALSE"])

    /// A refund or revocation that arrived before its payment was recorded, applied in the transaction that records
    /// it; or a reinstatement (`REFUND_REVERSED`) that arrived before its refund, which it then cancels.
    private static let waitingReversals = Migration(
        version: 7, name: "waiting reversals",
        statements: [
            """
            CREATE TABLE waiting_reversals (
                channel TEXT NOT NULL,
                provider_txn_id TEXT NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN ('refunded','revoked','reinstated')),
                cause TEXT NOT NULL,
                evidence TEXT NOT NULL,
                received_at BIGINT NOT NULL,
                PRIMARY KEY (channel, provider_txn_id)
            )
            """
        ])

    /// Subscription chains: the original transaction id of every App Store payment (nil for family-shared ones,
    /// which belong to whoever submits them), so a chain's owner is the owner of any of its transactions; and, on
    /// an inbox entry waiting for its chain to gain an owner, the chain and the signal's date, to apply it then.
    private static let subscriptionChains = Migration(
        version: 8, name: "subscription chains",
        statements: [
            "ALTER TABLE payment_transactions ADD COLUMN original_txn_id TEXT",
            "CREATE INDEX payments_by_chain ON payment_transactions (channel, original_txn_id)",
            "ALTER TABLE inbox ADD COLUMN chain TEXT",
            "ALTER TABLE inbox ADD COLUMN signed_at BIGINT",
            "CREATE INDEX inbox_by_chain ON inbox (chain)",
        ])

    /// The operator console: signed-in sessions (the token's SHA-256 only), the append-only log of what operators
    /// did, and the indexes its lists need to stay fast at millions of orders (keyset pages, newest first, by each
    /// filter, the user's being `orders_by_user` with the row id SQLite keeps in every index; payments by transaction id
    /// whatever the channel; webhook events by order).
    private static let operatorConsole = Migration(
        version: 9, name: "operator console",
        statements: [
            """
            CREATE TABLE console_sessions (
                token_sha256 TEXT PRIMARY KEY,
                operator TEXT NOT NULL,
                csrf TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                last_seen_at BIGINT NOT NULL
            )
            """,
            """
            CREATE TABLE operator_actions (
                id {ID},
                operator TEXT NOT NULL,
                action TEXT NOT NULL,
                target TEXT,
                detail TEXT,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX orders_by_created ON orders (created_at, id)",
            "CREATE INDEX orders_by_status_created ON orders (status, created_at, id)",
            "CREATE INDEX orders_by_channel_created ON orders (channel, created_at, id)",
            "CREATE INDEX orders_by_product_created ON orders (product_id, created_at, id)",
            "CREATE INDEX payments_by_txn ON payment_transactions (provider_txn_id)",
            "CREATE INDEX payments_by_original_txn ON payment_transactions (original_txn_id)",
            "CREATE INDEX payments_by_recorded ON payment_transactions (recorded_at)",
            "CREATE INDEX webhook_outbox_by_order ON webhook_outbox (order_id, id)",
        ],
        engineStatements: appendOnly("operator_actions"))

    /// Two indexes of payments that others serve as well: a chain's payments are found by
    /// `payments_by_original_txn` (a chain is a few rows, of one channel), and a transaction id whatever its channel by
    /// the unique (channel, provider_txn_id) index with the three channels listed. Each was one more entry to insert
    /// and one more page for every commit to write, for every payment.
    private static let fewerPaymentIndexes = Migration(
        version: 10, name: "fewer payment indexes",
        statements: ["DROP INDEX payments_by_chain", "DROP INDEX payments_by_txn"])

    /// Two costs of every PostgreSQL insert that bought nothing:
    /// - PostgreSQL tries to compress each value that makes a row longer than about 2 kB before it stores it apart:
    ///   an inbox body (an App Store submission is a 4 kB JWS) is base64 and signatures, which never shrink by the
    ///   quarter compression must win, so every attempt was wasted (`pglz_compress`, 3% of PostgreSQL's time under
    ///   load). Bodies are now stored apart as they are.
    /// - An order's catalog version was checked twice: by its own reference to `catalog_versions` and by the
    ///   reference of (catalog version, product) to `products`, whose rows reference `catalog_versions` themselves.
    ///   The first is dropped: the second still admits only an order of a product of an existing version, and still
    ///   keeps both from being deleted under it. Each check is a query run and a row locked, and every order locked
    ///   the same row.
    /// SQLite never compresses, and its checks are index lookups (dropping a reference there rebuilds the table).
    private static let leanerPostgresInserts = Migration(
        version: 11, name: "leaner PostgreSQL inserts", statements: [],
        engineStatements: [
            .postgres: [
                "ALTER TABLE inbox ALTER COLUMN body SET STORAGE EXTERNAL",
                "ALTER TABLE orders DROP CONSTRAINT orders_catalog_version_id_fkey",
            ]
        ])

    /// A provider transaction id that arrived for one order while recorded for another: the claim is kept as it came
    /// (append-only), once per transaction and claiming order, beside the flag it raised on that order; an operator
    /// sees both orders and the signal that made the claim.
    private static let paymentConflicts = Migration(
        version: 12, name: "payment id conflicts",
        statements: [
            """
            CREATE TABLE payment_conflicts (
                id {ID},
                channel TEXT NOT NULL CHECK (channel IN (\(channels))),
                provider_txn_id TEXT NOT NULL,
                order_id BIGINT NOT NULL REFERENCES orders(id),
                recorded_order_id BIGINT NOT NULL REFERENCES orders(id),
                amount_minor BIGINT NOT NULL,
                currency TEXT NOT NULL,
                cause TEXT NOT NULL CHECK (cause IN (\(causes))),
                evidence TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                UNIQUE (order_id, channel, provider_txn_id),
                CHECK (order_id <> recorded_order_id)
            )
            """,
            "CREATE INDEX payment_conflicts_by_recorded_order ON payment_conflicts (recorded_order_id)",
        ],
        engineStatements: appendOnly("payment_conflicts"))

    /// What the App Store last said of each subscription chain: the newest signed version of each transaction and of
    /// the renewal information (``SubscriptionSignal``), from which a subscription's state is folded. A chain's rows
    /// are few (one per period, one renewal information); its owner is found through `payments_by_original_txn`.
    private static let subscriptionSignals = Migration(
        version: 13, name: "subscription signals",
        statements: [
            """
            CREATE TABLE subscription_signals (
                chain TEXT NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN (\(signalKinds))),
                signal_key TEXT NOT NULL,
                signed_at BIGINT NOT NULL,
                body TEXT NOT NULL,
                PRIMARY KEY (chain, kind, signal_key)
            )
            """
        ])

    /// Each subscription's state as last announced (its chain, owner and group; the dates that make it lapse without
    /// another signal), for the console's counts per group: written with the announcement, one row per chain.
    private static let subscriptionStates = Migration(
        version: 14, name: "subscription states",
        statements: [
            """
            CREATE TABLE subscription_states (
                chain TEXT PRIMARY KEY,
                user_id TEXT NOT NULL,
                group_id TEXT NOT NULL,
                state TEXT NOT NULL CHECK (state IN (\(subscriptionStateNames))),
                expires_at BIGINT,
                grace_ends_at BIGINT,
                changed_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX subscription_states_by_group ON subscription_states (group_id, state)",
        ])

    /// Each channel's day checked against its provider's statement: the last run's status and report (a day run
    /// again replaces it). Read by day, newest first, for the console and `/v1/admin/statements`.
    private static let statementRuns = Migration(
        version: 15, name: "statement runs",
        statements: [
            """
            CREATE TABLE statement_runs (
                channel TEXT NOT NULL CHECK (channel IN (\(channels))),
                day TEXT NOT NULL CHECK (length(day) = 10),
                status TEXT NOT NULL CHECK (status IN ('balanced','discrepancies','waiting')),
                report TEXT NOT NULL,
                ran_at BIGINT NOT NULL,
                PRIMARY KEY (channel, day)
            )
            """,
            "CREATE INDEX statement_runs_by_day ON statement_runs (day, channel)",
        ])

    /// The payments reversed on a day, for the statement reconciler (a refund the ledger recorded and the
    /// statement lacks): a partial index, so a payment recorded unreversed, the write path's every insert, adds no
    /// entry to it; only a reversal does.
    private static let reversalsByDay = Migration(
        version: 16, name: "reversals by day",
        statements: [
            "CREATE INDEX payments_by_reversal ON payment_transactions (reversed_at) WHERE reversed_at IS NOT NULL"
        ])

    /// The offer a payment took (`payment_transactions.offer`: `promotional:ID`, `win_back:ID`, …), counted per user
    /// for an offer's limit (through `orders_by_user`) and per offer for the console (a partial index: a payment
    /// without an offer, the write path's every insert, adds no entry to it); and the signatures made of each offer.
    private static let offers = Migration(
        version: 17, name: "offers",
        statements: [
            "ALTER TABLE payment_transactions ADD COLUMN offer TEXT",
            "CREATE INDEX payments_by_offer ON payment_transactions (offer) WHERE offer IS NOT NULL",
            """
            CREATE TABLE offer_signatures (
                offer TEXT PRIMARY KEY,
                product_id TEXT NOT NULL,
                signed BIGINT NOT NULL,
                last_signed_at BIGINT NOT NULL
            )
            """,
        ])

    /// An order paid nothing: a subscription's free trial, a free promotional or win-back offer, is recorded at what
    /// the App Store charged, zero (`orders.amount_minor` was `> 0`; a free trial's first transaction failed to record).
    /// A relaxed CHECK holds for every row already kept. PostgreSQL replaces the constraint; SQLite, which cannot
    /// alter one, takes the way its manual gives for removing or changing a CHECK ("Making Other Kinds Of Table Schema
    /// Changes", sqlite.org/lang_altertable.html): the table's text edited under `writable_schema`, the schema version
    /// incremented, in this migration's transaction.
    private static let freeOfferPeriods = Migration(
        version: 18, name: "free offer periods", statements: [],
        engineStatements: [
            .postgres: [
                """
                ALTER TABLE orders DROP CONSTRAINT orders_amount_minor_check,
                    ADD CONSTRAINT orders_amount_minor_check CHECK (amount_minor >= 0)
                """
            ]
        ],
        engineSteps: [
            .sqlite: { db in
                try await sqliteReplacingChecks(
                    [
                        CheckEdit(
                            check: "CHECK (amount_minor > 0)", replacement: "CHECK (amount_minor >= 0)",
                            tables: ["orders"])
                    ],
                    db)
            }
        ])

    /// The app's own purchases (`AppTransaction`) each user's phones showed: one row per user and Apple ID, read by
    /// its user (the primary key's prefix).
    private static let appPurchases = Migration(
        version: 19, name: "app purchases",
        statements: [
            """
            CREATE TABLE app_purchases (
                user_id TEXT NOT NULL,
                app_transaction_id TEXT NOT NULL,
                original_application_version TEXT NOT NULL,
                original_purchase_date BIGINT,
                environment TEXT NOT NULL,
                first_seen_at BIGINT NOT NULL,
                last_seen_at BIGINT NOT NULL,
                PRIMARY KEY (user_id, app_transaction_id)
            )
            """
        ])

    /// The tables with a `channel` column.
    private static let channelTables = [
        "orders", "payment_transactions", "inbox", "payment_conflicts", "statement_runs",
    ]

    /// A channel is a name (``Channel``: 1–32 lowercase letters and digits, a letter first), not one of the three the
    /// first migrations listed: a channel added to the server adds no migration. Every row kept holds one of those
    /// three, which the new CHECK admits. PostgreSQL replaces each column's constraint (named `<table>_channel_check`
    /// by PostgreSQL); SQLite edits the tables' text as ``freeOfferPeriods`` does.
    private static let channelNames = Migration(
        version: 20, name: "channel names", statements: [],
        engineStatements: [
            .postgres: channelTables.map { table in
                """
                ALTER TABLE \(table) DROP CONSTRAINT \(table)_channel_check,
                    ADD CONSTRAINT \(table)_channel_check CHECK (channel ~ '^[a-z][a-z0-9]{0,31}$')
                """
            }
        ],
        engineSteps: [
            .sqlite: { db in
                try await sqliteReplacingChecks(
                    [
                        CheckEdit(
                            check: "CHECK (channel IN (\(channels)))",
                            replacement:
                                "CHECK (length(channel) BETWEEN 1 AND 32 AND channel GLOB '[a-z]*' AND channel NOT GLOB '*[^a-z0-9]*')",
                            tables: channelTables)
                    ], db)
            }
        ])

    /// A verified signal's JWS header (Apple's certificate chain, the same 3 KiB in every transaction one key signs)
    /// is kept once, in `inbox_segments`, and its entries keep the rest of the body and where it stood
    /// (``InboxSegment``); `inbox_bodies` gives every entry's body as received. Entries stored before keep their whole
    /// body (no segment), as do signals stored unverified.
    private static let inboxSegments = Migration(
        version: 21, name: "inbox segments",
        statements: [
            "CREATE TABLE inbox_segments (sha256 TEXT PRIMARY KEY, bytes {BLOB} NOT NULL)",
            "ALTER TABLE inbox ADD COLUMN segment_sha256 TEXT",
            "ALTER TABLE inbox ADD COLUMN segment_at INTEGER",
        ],
        engineStatements: [
            // SQLite's || makes text of its operands' bytes, unchanged; the CAST gives them back as a BLOB.
            .sqlite: [
                """
                CREATE VIEW inbox_bodies AS
                SELECT inbox.id AS id, CASE WHEN inbox.segment_sha256 IS NULL THEN inbox.body
                    ELSE CAST(substr(inbox.body, 1, inbox.segment_at) || s.bytes || substr(inbox.body, inbox.segment_at + 1) AS BLOB)
                    END AS body
                FROM inbox LEFT JOIN inbox_segments s ON s.sha256 = inbox.segment_sha256
                """
            ],
            .postgres: [
                """
                CREATE VIEW inbox_bodies AS
                SELECT inbox.id AS id, CASE WHEN inbox.segment_sha256 IS NULL THEN inbox.body
                    ELSE substring(inbox.body from 1 for inbox.segment_at) || s.bytes
                        || substring(inbox.body from inbox.segment_at + 1)
                    END AS body
                FROM inbox LEFT JOIN inbox_segments s ON s.sha256 = inbox.segment_sha256
                """
            ],
        ])

    /// Indexes that hold only what their queries ask for; each index a submission's write changes is a page or two
    /// more for every commit (`scripts/bench/wal-pages`).
    /// - `orders_by_status` (status, updated_at): no query asks for `updated_at`; `orders_by_status_created` serves
    ///   every query by status.
    /// - `inbox_unprocessed`, `inbox_by_chain` and `inbox_by_verdict` hold the entries not processed yet: every query
    ///   of them asks `processed_at IS NULL` (the sweep, a chain's waiting signals, the held, failed and waiting);
    ///   `inbox_refused` the refused, for their purge. A submission, stored processed and applied, is in none.
    ///   (`processed_at` stays the sweep's index's first column, always NULL there: with it SQLite's planner, which has
    ///   no statistics, matches two of the sweep's terms and prefers this index to the inbox's unique one.)
    private static let indexesOfWhatIsAsked = Migration(
        version: 22, name: "indexes of what is asked",
        statements: [
            "DROP INDEX orders_by_status",
            "DROP INDEX inbox_unprocessed",
            "CREATE INDEX inbox_unprocessed ON inbox (processed_at, received_at) WHERE processed_at IS NULL",
            "DROP INDEX inbox_by_chain",
            "CREATE INDEX inbox_by_chain ON inbox (chain) WHERE processed_at IS NULL",
            "DROP INDEX inbox_by_verdict",
            "CREATE INDEX inbox_by_verdict ON inbox (verdict, id) WHERE processed_at IS NULL",
            "CREATE INDEX inbox_refused ON inbox (id) WHERE verdict = 'refused'",
        ])

    /// The CHECKs that list three values or more (`status IN ('created', …)`), written on SQLite as comparisons joined
    /// by OR: SQLite evaluates `x IN (…)` of more than two constants through a temporary index it builds anew at each
    /// execution, 2 µs an insert (docs/benchmarks.md) — an App Store submission inserted four such rows (its order,
    /// payment, grant and events) — where the comparisons cost next to nothing. They admit the same values, and NULL
    /// where the column does, as before. PostgreSQL is unchanged.
    private static let checksWithoutTemporaryTables = Migration(
        version: 23, name: "checks without temporary tables", statements: [],
        engineSteps: [
            .sqlite: { db in
                try await sqliteReplacingChecks(
                    listedChecks.map { tables, column, values in
                        let literals = values.map { "'\($0)'" }
                        return CheckEdit(
                            check: "CHECK (\(column) IN (\(literals.joined(separator: ","))))",
                            replacement: "CHECK (" + literals.map { "\(column) = \($0)" }.joined(separator: " OR ")
                                + ")",
                            tables: tables)
                    }, db)
            }
        ])

    /// The CHECKs listing three values or more at version 22, as the tables' text holds them.
    private static let listedChecks: [(tables: [String], column: String, values: [String])] = [
        (
            ["orders"], "status",
            [
                "created", "paying", "paid", "fulfilled", "cancelled", "closed", "failed", "refunded", "revoked",
                "flagged",
            ]
        ),
        (
            ["payment_transactions", "order_events", "payment_conflicts"], "cause",
            ["app", "notification", "reconciliation", "admin", "system"]
        ),
        (["grants"], "kind", ["add_balance", "unlock_entitlement", "extend_entitlement"]),
        (["waiting_reversals"], "kind", ["refunded", "revoked", "reinstated"]),
        (["subscription_states"], "state", ["active", "in_grace_period", "in_billing_retry", "expired", "revoked"]),
        (["statement_runs"], "status", ["balanced", "discrepancies", "waiting"]),
    ]

    /// A CHECK's text in some tables' definitions and the text that replaces it.
    private struct CheckEdit {
        let check: String
        let replacement: String
        let tables: [String]
    }

    /// Makes each of `edits` in its tables' definitions, the way SQLite's manual gives for removing or changing a CHECK
    /// ("Making Other Kinds Of Table Schema Changes", sqlite.org/lang_altertable.html): under `writable_schema`, the
    /// schema version incremented once for all of them (each connection reads the schema again after), in the
    /// migration's transaction. Throws before it writes when a table's text does not hold its check exactly once (a
    /// schema this code did not write).
    private static func sqliteReplacingChecks(_ edits: [CheckEdit], _ db: any SQLDatabase) async throws {
        for edit in edits {
            for table in edit.tables {
                let row = try await db.sql(
                    "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = \(bind: table)"
                ).first()
                let text = try row?.decode(column: "sql", as: String.self) ?? ""
                guard text.components(separatedBy: edit.check).count == 2 else {
                    throw LedgerError.unexpectedSchema("table \(table) does not hold `\(edit.check)` once")
                }
            }
        }
        let row = try await db.sql("PRAGMA schema_version").first()
        let version = try row?.decode(column: "schema_version", as: Int.self) ?? 0
        try await db.sql("PRAGMA writable_schema = ON").run()
        for edit in edits {
            for table in edit.tables {
                try await db.sql(
                    """
                    UPDATE sqlite_master SET sql = replace(sql, \(bind: edit.check), \(bind: edit.replacement))
                    WHERE type = 'table' AND name = \(bind: table)
                    """
                ).run()
            }
        }
        try await db.sql(LedgerSQL("PRAGMA schema_version = " + String(version + 1))).run()
        try await db.sql("PRAGMA writable_schema = OFF").run()
    }
}
