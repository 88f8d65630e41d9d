extension RequestBudget {
    /// The App Store Server API's transaction histories: Apple publishes its limits per endpoint and answers 429
    /// past them (https://developer.apple.com/documentation/appstoreserverapi/ratelimitexceedederror); 20 a second
    /// keeps a thousand customers' histories to under a minute.
    public static let appStoreHistories = RequestBudget(concurrency: 8, perSecond: 20)
}
