public import BeaconWire

extension CaptureFile {
    /// Decodes every advertising report in the file, in order, and returns the decode counters (the file's
    /// container drops included). Whatever `body` throws stops the decode and is passed through.
    @inlinable
    public func forEachAdvert(_ body: (Advert, RecordPosition) throws -> Void) throws -> DecodeCounters {
        var decoder = AdvertDecoder()
        var failure: (any Error)?
        try forEachRecord { record, position in
            decoder.decode(record) { advert in
                guard failure == nil else { return }
                do { try body(advert, position) } catch { failure = error }
            }
            if let failure { throw failure }
        }
        var counters = decoder.counters
        counters.add(self.counters)
        return counters
    }
}
