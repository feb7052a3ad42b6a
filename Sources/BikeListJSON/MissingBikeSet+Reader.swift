public import BeaconEngine

extension MissingBikeSet.Builder {
    /// An item as `BikeListReader` hands it out (fields of a cache are not bikes and are ignored here).
    public mutating func add(_ item: BikeListReader.Item) {
        switch item {
        case .entry(let entry): add(entry)
        case .rejected(let reason): reject(reason)
        case .field: break
        }
    }
}
