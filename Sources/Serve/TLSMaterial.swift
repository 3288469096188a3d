import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A certificate authority and a server certificate for 127.0.0.1 and localhost (P-256): the
/// server certificate is made at every start (valid from an hour ago for 30 days); the CA is made
/// too, or read back from a file a previous start wrote with its key beside it, so that clients
/// configured once (`REQUESTS_CA_BUNDLE`, `az`'s CA bundle) keep working across restarts.
struct TLSMaterial {
    /// The CA certificate, PEM: what `--ca-cert` writes and clients pass as their CA bundle.
    let caPEM: String
    /// The CA's private key, PEM (kept beside `--ca-cert`, readable by its owner only).
    let caKeyPEM: String
    /// Whether the CA was read back rather than made.
    let reused: Bool
    /// What NIOSSL serves: the server certificate, then the CA.
    let configuration: TLSConfiguration

    /// How long a CA made here is valid: a year, so a kept CA outlives many restarts.
    static let caLifetime: TimeInterval = 365 * 86_400

    /// A fresh CA, or the one `existing` holds (its certificate and key PEM), and a server
    /// certificate it signs.
    init(existing: (certificate: String, key: String)? = nil) throws {
        let now = Date()
        let caKey: P256.Signing.PrivateKey
        let ca: Certificate
        if let existing {
            caKey = try P256.Signing.PrivateKey(pemRepresentation: existing.key)
            ca = try Certificate(pemEncoded: existing.certificate)
            guard ca.publicKey == Certificate.PublicKey(caKey.publicKey) else { throw TLSMaterialError.keyDoesNotMatch }
            guard ca.notValidAfter > now + 86_400 else { throw TLSMaterialError.expired(ca.notValidAfter) }
            reused = true
        } else {
            caKey = P256.Signing.PrivateKey()
            let caName = try DistinguishedName {
                OrganizationName("rehearse")
                CommonName("rehearse serve local CA")
            }
            ca = try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(caKey.publicKey),
                notValidBefore: now - 3600, notValidAfter: now + Self.caLifetime, issuer: caName, subject: caName,
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                    Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                    SubjectKeyIdentifier(hash: Certificate.PublicKey(caKey.publicKey))
                },
                issuerPrivateKey: Certificate.PrivateKey(caKey))
            reused = false
        }
        let caIdentifier = SubjectKeyIdentifier(hash: Certificate.PublicKey(caKey.publicKey))
        let serverKey = P256.Signing.PrivateKey()
        let serverName = try DistinguishedName {
            OrganizationName("rehearse")
            CommonName("localhost")
        }
        let server = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(serverKey.publicKey),
            notValidBefore: now - 3600, notValidAfter: min(now + 30 * 86_400, ca.notValidAfter), issuer: ca.subject, subject: serverName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
                SubjectKeyIdentifier(hash: Certificate.PublicKey(serverKey.publicKey))
                AuthorityKeyIdentifier(keyIdentifier: caIdentifier.keyIdentifier)
            },
            issuerPrivateKey: Certificate.PrivateKey(caKey))
        caPEM = try existing?.certificate ?? ca.serializeAsPEM().pemString
        caKeyPEM = existing?.key ?? caKey.pemRepresentation
        let chain = try [server, ca].map { try NIOSSLCertificate(bytes: Array($0.serializeAsPEM().pemString.utf8), format: .pem) }
        let key = try NIOSSLPrivateKey(bytes: Array(serverKey.pemRepresentation.utf8), format: .pem)
        configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
    }
}

/// Why a kept CA cannot be used again.
enum TLSMaterialError: Error, CustomStringConvertible {
    /// The key beside the certificate is not the certificate's.
    case keyDoesNotMatch
    /// The CA expires within a day (or has).
    case expired(Date)

    var description: String {
        switch self {
        case .keyDoesNotMatch: return "the key beside it is not the certificate's key"
        case .expired(let date): return "the CA expires at \(date) (within a day); delete it and its key to make a new one"
        }
    }
}
