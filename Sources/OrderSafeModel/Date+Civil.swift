/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's days-to-civil): how the hot paths write
/// dates without `Calendar` or `DateFormatter`. Callers keep `days` within ±10⁹, where no arithmetic can overflow.
@_spi(OrderSafeServer) public func civilDate(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
    let (era, dayOfEra) = (days + 719_468).floorDivided(by: 146_097)
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
}

extension Int64 {
    /// Quotient rounded toward minus infinity, and the remainder that goes with it (never negative).
    @_spi(OrderSafeServer) public func floorDivided(by divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let (quotient, remainder) = quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }
}
