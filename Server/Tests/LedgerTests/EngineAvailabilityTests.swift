import Foundation
import LedgerTestSupport
import Testing

@Suite("Test engines")
struct EngineAvailabilityTests {
    @Test("PostgreSQL is available when the run requires it (scripts/test and CI do)")
    func postgresWhenRequired() {
        if ProcessInfo.processInfo.environment["ORDERSAFE_TEST_REQUIRE_POSTGRES"] == "1" {
            #expect(TestEngine.available.contains(.postgres), "ORDERSAFE_TEST_POSTGRES_URL is missing")
            #expect(
                ProcessInfo.processInfo.environment["ORDERSAFE_TEST_POSTGRES_BIN"] != nil,
                "ORDERSAFE_TEST_POSTGRES_BIN is missing: the PostgreSQL restore drills would not run")
        }
    }
}
