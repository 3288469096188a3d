import Formats
import Foundation
import JWTKit

/// The claims of the access tokens the fake Entra authority issues, as Entra's v1 tokens name them.
struct AccessTokenClaims: JWTPayload {
    var aud: AudienceClaim
    var iss: IssuerClaim
    var iat: IssuedAtClaim
    var nbf: NotBeforeClaim
    var exp: ExpirationClaim
    var sub: SubjectClaim
    var appid: String
    var oid: String
    var tid: String

    func verify(using algorithm: some JWTAlgorithm) async throws { try exp.verifyNotExpired() }
}

/// The fake Microsoft Entra authority and Azure's cloud metadata: just enough for `az cloud
/// register`, `az login --service-principal`, MSAL and azure-identity to get a token and list
/// the one subscription. No secret is checked: any client id and secret get a token.
struct Authority {
    /// The served tenant and subscription.
    static let tenant = "00000000-0000-4000-8000-00000000aaaa"
    static let subscription = "00000000-0000-4000-8000-00000000bbbb"

    /// `https://127.0.0.1:PORT`, no trailing slash.
    let base: String

    /// `/metadata/endpoints?api-version=2022-09-01`: the cloud's endpoints, all this server
    /// (Azure answers a list with one entry per cloud for this version; `az` reads either).
    var metadata: JSON {
        .object([
            "name": .string("Rehearse"),
            "portal": .string(base),
            "resourceManager": .string(base + "/"),
            "gallery": .string(base + "/"),
            "graph": .string(base + "/"),
            "microsoftGraphResourceId": .string(base + "/"),
            "graphAudience": .string(base + "/"),
            "batch": .string(base + "/"),
            "media": .string(base + "/"),
            "sqlManagement": .string(base + "/"),
            "vmImageAliasDoc": .string(base + "/rehearse/aliases.json"),
            "authentication": .object([
                "loginEndpoint": .string(base + "/"),
                "audiences": .array([.string(base + "/"), .string("https://management.core.windows.net/")]),
                "tenant": .string("common"),
                "identityProvider": .string("AAD"),
            ]),
            "suffixes": .object([
                "acrLoginServer": .string("azurecr.rehearse"),
                "keyVaultDns": .string("vault.rehearse"),
                "sqlServerHostname": .string("database.rehearse"),
                "storage": .string("core.rehearse"),
            ]),
        ])
    }

    /// `/{tenant}/v2.0/.well-known/openid-configuration` (and the v1 path).
    func openIDConfiguration(tenant: String) -> JSON {
        .object([
            "issuer": .string("\(base)/\(tenant)/v2.0"),
            "authorization_endpoint": .string("\(base)/\(tenant)/oauth2/v2.0/authorize"),
            "token_endpoint": .string("\(base)/\(tenant)/oauth2/v2.0/token"),
            "device_authorization_endpoint": .string("\(base)/\(tenant)/oauth2/v2.0/devicecode"),
            "end_session_endpoint": .string("\(base)/\(tenant)/oauth2/v2.0/logout"),
            "jwks_uri": .string("\(base)/\(tenant)/discovery/v2.0/keys"),
            "response_types_supported": .array(["code", "id_token", "code id_token", "token id_token"].map(JSON.string)),
            "subject_types_supported": .array([.string("pairwise")]),
            "id_token_signing_alg_values_supported": .array([.string("RS256")]),
            "token_endpoint_auth_methods_supported": .array([.string("client_secret_post"), .string("client_secret_basic")]),
            "scopes_supported": .array(["openid", "profile", "email", "offline_access"].map(JSON.string)),
            "tenant_region_scope": .string("NA"),
            "cloud_instance_name": .string("rehearse"),
        ])
    }

    /// MSAL's instance discovery (`/common/discovery/instance`): this host is its own alias.
    func instanceDiscovery(host: String, tenant: String) -> JSON {
        .object([
            "tenant_discovery_endpoint": .string("\(base)/\(tenant)/v2.0/.well-known/openid-configuration"),
            "api-version": .string("1.1"),
            "metadata": .array([.object(["preferred_network": .string(host), "preferred_cache": .string(host),
                                         "aliases": .array([.string(host)])])]),
        ])
    }

    /// The token endpoint's answer for `form` (`client_id`, `scope` or `resource`): any client id
    /// and secret get a one-hour JWT-shaped bearer token.
    func token(form: [String: String], tenant: String) async throws -> JSON {
        let client = form["client_id"] ?? "00000000-0000-0000-0000-000000000000"
        let audience = form["resource"] ?? form["scope"].map { scope in
            String(scope.split(separator: " ").first ?? "").replacingOccurrences(of: "/.default", with: "/")
        } ?? base + "/"
        let now = Date()
        let tid = tenant.count == 36 ? tenant : Self.tenant
        let claims = AccessTokenClaims(aud: AudienceClaim(value: [audience]), iss: IssuerClaim(value: "https://sts.windows.net/\(tid)/"),
                                       iat: IssuedAtClaim(value: now), nbf: NotBeforeClaim(value: now - 300),
                                       exp: ExpirationClaim(value: now + 3600), sub: SubjectClaim(value: client), appid: client,
                                       oid: client, tid: tid)
        // Nobody verifies these tokens: a fresh random key signs each.
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: Data((0..<32).map { _ in UInt8.random(in: 0...255) })), digestAlgorithm: .sha256)
        let token = try await keys.sign(claims)
        return .object([
            "token_type": .string("Bearer"),
            "expires_in": .int(3599),
            "ext_expires_in": .int(3599),
            "expires_on": .string("\(Int(now.timeIntervalSince1970) + 3599)"),
            "resource": .string(audience),
            "access_token": .string(token),
        ])
    }

    /// `/subscriptions`: the one subscription, with the tenant.
    var subscriptions: JSON { .object(["value": .array([subscription(Self.subscription)])]) }

    func subscription(_ id: String) -> JSON {
        .object([
            "id": .string("/subscriptions/\(id)"),
            "subscriptionId": .string(id),
            "tenantId": .string(Self.tenant),
            "displayName": .string("rehearse"),
            "state": .string("Enabled"),
            "subscriptionPolicies": .object(["locationPlacementId": .string("Public_2014-09-01"), "quotaId": .string("PayAsYouGo_2014-09-01"),
                                             "spendingLimit": .string("Off")]),
            "authorizationSource": .string("RoleBased"),
        ])
    }

    /// `/tenants`.
    var tenants: JSON {
        .object(["value": .array([.object(["id": .string("/tenants/\(Self.tenant)"), "tenantId": .string(Self.tenant),
                                           "tenantCategory": .string("Home"), "displayName": .string("rehearse"),
                                           "defaultDomain": .string("rehearse.onmicrosoft.com")])])])
    }
}
