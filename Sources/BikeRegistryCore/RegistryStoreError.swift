/// What went wrong in the store, or what an operator's input to it lacks, said for an operator.
public struct RegistryStoreError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
