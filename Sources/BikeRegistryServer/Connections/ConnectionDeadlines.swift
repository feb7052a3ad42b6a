/// When a connection must have done something by, or be closed: pure, on any clock (HTTPConnectionStateHandler's
/// state machine in Hummingbird is the model). Hummingbird's own idle timeout counts from whole request parts, so a
/// request head sent a byte a second never starts its clock; this one starts at the request's first byte.
///
/// - Between requests (and from connecting): the next request's first byte within `idle`.
/// - From a request's first byte: its head within `head`; then the rest of it (its body) within `idle`.
/// - While the server answers: no deadline here; every wait the answer makes has its own (the database's, a test
///   message's delivery).
struct ConnectionDeadlines<C: Clock> {
    enum Phase: Equatable {
        case waiting(since: C.Instant)
        case readingHead(since: C.Instant)
        case readingBody(since: C.Instant)
        case answering
    }

    let head: C.Duration
    let idle: C.Duration
    private(set) var phase: Phase
    /// Requests read whose answers have not ended (pipelined requests can overlap).
    private var answersOwed = 0

    init(head: C.Duration, idle: C.Duration, now: C.Instant) {
        self.head = head
        self.idle = idle
        phase = .waiting(since: now)
    }

    /// When the connection is closed unless something happens first; nil while the server answers.
    var deadline: C.Instant? {
        switch phase {
        case .waiting(let since): since.advanced(by: idle)
        case .readingHead(let since): since.advanced(by: head)
        case .readingBody(let since): since.advanced(by: idle)
        case .answering: nil
        }
    }

    /// Bytes arrived: the first of a request starts its head's clock.
    mutating func bytesRead(at now: C.Instant) {
        if case .waiting = phase { phase = .readingHead(since: now) }
    }

    /// A whole request head was read.
    mutating func headRead(at now: C.Instant) {
        answersOwed += 1
        phase = .readingBody(since: now)
    }

    /// The request's last part was read.
    mutating func requestRead() {
        phase = .answering
    }

    /// An answer's last part was written: with none owed, the connection waits for the next request.
    mutating func answerWritten(at now: C.Instant) {
        answersOwed = max(0, answersOwed - 1)
        if answersOwed == 0, phase == .answering { phase = .waiting(since: now) }
    }

    /// Whether the connection is past its deadline at `now`.
    func expired(at now: C.Instant) -> Bool {
        deadline.map { now >= $0 } ?? false
    }
}
