import ArgumentParser
import BeaconCLI

Beacond.main()
