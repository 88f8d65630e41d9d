import Foundation
import OrderSafeModel

/// Loads the catalog file named in the settings, or the bundled example catalog.
enum CatalogLoader {
    static func load(_ settings: Settings.Catalog) throws -> Catalog {
        let data: Data
        if let path = settings.file {
            guard let contents = FileManager.default.contents(atPath: path) else {
                throw SettingsError(key: "catalog.file", reason: "cannot read '\(path)'")
            }
            data = contents
        } else {
            data = try bundledResource("catalog.example", ext: "json")
        }
        do {
            return try Catalog(json: data)
        } catch {
            throw SettingsError(key: "catalog.file", reason: error.description)
        }
    }

    static func bundledResource(_ name: String, ext: String) throws -> Data {
        guard let url = Bundle.module.url(forResource: name, withExtension: ext), let data = try? Data(contentsOf: url)
        else {
            throw SettingsError(key: "catalog.file", reason: "the bundled \(name).\(ext) is missing from this build")
        }
        return data
    }
}
