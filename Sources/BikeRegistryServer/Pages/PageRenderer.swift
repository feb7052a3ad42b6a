import HTTPTypes
import Hummingbird
import Mustache
import NIOCore

/// Renders a page's template into a response with the pages' headers (`PageHeaders`).
struct PageRenderer: Sendable {
    private let library: MustacheLibrary

    init() {
        var library = MustacheLibrary()
        for (name, text) in PageTemplates.all {
            // The templates are constants of this program; one that does not parse is a bug the tests meet first.
            guard let template = try? MustacheTemplate(string: text) else {
                preconditionFailure("the \(name) page's template does not parse")
            }
            library.register(template, named: name)
        }
        self.library = library
    }

    /// - Parameter isPrivate: whether the page shows a private link or a bike's details (never cached).
    func page(
        _ template: String, _ view: some Sendable, status: HTTPResponse.Status = .ok, isPrivate: Bool,
        extraHeaders: HTTPFields = [:]
    ) -> Response {
        let html = library.render(view, withTemplate: template) ?? ""
        var headers = PageHeaders.page(private: isPrivate)
        headers.append(contentsOf: extraHeaders)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// A short page that says one thing: a refusal, a deletion, a link that opens nothing.
    func message(
        _ heading: String, _ text: String, status: HTTPResponse.Status, back: String = "/",
        backText: String = "Back to the registration page", extraHeaders: HTTPFields = [:]
    ) -> Response {
        page(
            "message", MessageView(heading: heading, text: text, back: back, backText: backText), status: status,
            isPrivate: true, extraHeaders: extraHeaders)
    }
}

/// The answers every form page gives alike.
extension PageRenderer {
    var badForm: Response {
        message("Not understood", "The form could not be read. Reload the page and try again.", status: .badRequest)
    }

    func refusedCSRF(back: String) -> Response {
        message(
            "Form refused",
            "This form was not sent from this site's page, or has expired (it needs a token the page gives it, and a "
                + "cookie for the registration form). Go back, reload the page and send it again.",
            status: .forbidden, back: back, backText: "Back")
    }
}
