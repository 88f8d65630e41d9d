import ArgumentParser
import Foundation
import OrderSafeServer

struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Mint a development bearer token for a user (sandbox, or with an HS256 secret configured).")

    @OptionGroup var settings: SettingsOptions

    @Option(help: "The user id (the token's sub).")
    var user: String

    @Option(help: "Lifetime in seconds.")
    var lifetime: Int = 86_400

    func validate() throws {
        guard !user.isEmpty, user.count <= 128 else { throw ValidationError("--user must be 1 to 128 characters") }
        guard lifetime > 0 else { throw ValidationError("--lifetime must be positive") }
    }

    func run() async throws {
        let loaded = try await settings.load()
        guard loaded.auth.jwtAlgorithm == .hs256,
            let secret = try DevelopmentCredentials.resolve(
                configured: loaded.auth.jwtSecret, name: "dev-jwt-secret", settings: loaded.server)
        else {
            throw ValidationError(
                "tokens can be minted only with HS256 and a secret (sandbox, or ORDERSAFE_AUTH_JWT_SECRET)")
        }
        let issuer = await DevelopmentTokenIssuer(secret: secret)
        print(try await issuer.token(userID: user, now: Date(), lifetime: TimeInterval(lifetime)))
    }
}
