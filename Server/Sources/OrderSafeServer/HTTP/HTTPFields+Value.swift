import HTTPTypes

extension HTTPFields {
    /// The value of the fields named `name`, as `self[name]` reads it (several joined with ", ", or "; " for
    /// cookies), without its join through a lazily mapped sequence, which the standard library runs as unspecialised
    /// generic code: 3,400 instructions for a request's one `Authorization` field, and as many for its
    /// `Content-Type` (`scripts/bench/instructions`, docs/benchmarks.md).
    func value(of name: HTTPField.Name) -> String? {
        var value: String?
        for field in self where field.name == name {
            if let earlier = value {
                value = earlier + (name == .cookie ? "; " : ", ") + field.value
            } else {
                value = field.value
            }
        }
        return value
    }
}
