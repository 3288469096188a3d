import Glibc
import Formats
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// The one HTTP configuration of `rehearse serve`: bounds on the request line and headers, an
/// idle timeout (a connection that sends nothing for `idleTimeout`, between requests or in the
/// middle of one, is closed), a connection limit below the process's file limit (idle clients
/// cannot take every descriptor), and the parser's refusals answered in ARM's error shape.
struct ServeHTTP {
    /// Bytes of the request line and headers together (a longer URL or header is 431).
    static let maxHeaderBytes = 64 * 1024
    /// Seconds a connection may stay silent (idle between requests, or stalled in one).
    static let idleSeconds: Int64 = 10

    /// Connections served at once: the soft file limit less room for the run's own files, at least 16.
    static var connectionLimit: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return 4096 }
        return max(16, min(65_536, Int(limit.rlim_cur) - 64))
    }

    static var channel: HTTP1Channel.Configuration {
        HTTP1Channel.Configuration(additionalChannelHandlers: [ParserRefusals()], idleTimeout: .seconds(idleSeconds),
                                   httpDecoderConfiguration: .init(maxHeaderFieldSize: maxHeaderBytes, maxHeaderListSize: maxHeaderBytes,
                                                                   maxHeaderFieldCount: 500))
    }

    /// What the parser refused, as ARM answers it: status, code and message.
    static func refusal(_ error: HTTPParserError) -> ARMError {
        switch error {
        case .headerOverflow:
            ARMError(.init(code: 431, reasonPhrase: "Request Header Fields Too Large"), code: "RequestHeaderFieldsTooLarge",
                     message: "The request line and headers are larger than the \(maxHeaderBytes) bytes allowed.")
        case .invalidMethod:
            ARMError(.notImplemented, code: "MethodNotSupported",
                     message: "The request method is not one rehearse serve knows; allowed GET, PUT, PATCH, POST, DELETE, HEAD, OPTIONS.")
        case .invalidHeaderToken, .invalidCharactersUsed, .lfExpected:
            ARMError(.badRequest, code: "InvalidRequestFormat",
                     message: "The request's headers hold characters HTTP does not allow (control bytes, or a line not ended by CRLF).")
        default:
            ARMError(.badRequest, code: "InvalidRequestFormat", message: "The request is not valid HTTP/1.1: \(error).")
        }
    }
}

/// Answers a request the HTTP parser refused with ARM's error body (not an empty 400), then
/// closes the connection; nothing more is read from it.
final class ParserRefusals: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    private var refused = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else { return context.fireErrorCaught(error) }
        guard !refused else { return }
        refused = true
        let refusal = ServeHTTP.refusal(parserError)
        let body = ByteBuffer(string: JSON.object(["error": refusal.json]).serialized(pretty: false))
        var fields = HTTPFields()
        fields[.contentType] = "application/json; charset=utf-8"
        fields[.contentLength] = String(body.readableBytes)
        fields[.connection] = "close"
        context.write(wrapOutboundOut(.head(HTTPResponse(status: refusal.status, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        let done = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: done)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        done.futureResult.whenComplete { _ in bound.value.close(promise: nil) }
    }
}
