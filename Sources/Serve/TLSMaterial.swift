import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A certificate authority and a server certificate for 127.0.0.1 and localhost, made at start
/// (P-256, valid from an hour ago for 30 days): clients trust the CA, written as PEM.
struct TLSMaterial {
    /// The CA certificate, PEM: what `--ca-cert` writes and clients pass as their CA bundle.
    let caPEM: String
    /// What NIOSSL serves: the server certificate, then the CA.
    let configuration: TLSConfiguration

    init() throws {
        let caKey = P256.Signing.PrivateKey()
        let serverKey = P256.Signing.PrivateKey()
        let now = Date()
        let caName = try DistinguishedName {
            OrganizationName("rehearse")
            CommonName("rehearse serve local CA")
        }
        let caIdentifier = SubjectKeyIdentifier(hash: Certificate.PublicKey(caKey.publicKey))
        let ca = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(caKey.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 30 * 86_400, issuer: caName, subject: caName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                caIdentifier
            },
            issuerPrivateKey: Certificate.PrivateKey(caKey))
        let serverName = try DistinguishedName {
            OrganizationName("rehearse")
            CommonName("localhost")
        }
        let server = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(serverKey.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 30 * 86_400, issuer: caName, subject: serverName,
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
        caPEM = try ca.serializeAsPEM().pemString
        let chain = try [server, ca].map { try NIOSSLCertificate(bytes: Array($0.serializeAsPEM().pemString.utf8), format: .pem) }
        let key = try NIOSSLPrivateKey(bytes: Array(serverKey.pemRepresentation.utf8), format: .pem)
        configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
    }
}
