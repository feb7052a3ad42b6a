// Engine benchmark: the advert ring against a mutex-guarded Deque, and adverts through ring + engine with all
// 65,536 minors missing, against the decoder's own per-report cost measured in the same run. Also checks that
// the engine's steady state allocates nothing and that resident memory stays flat over the run.
//
// EngineBenchmark [--adverts N] [--iterations K] [CAPTURE]; CAPTURE defaults to Benchmarks/out/adverts-1m.pcap.
import Foundation

func runBenchmarks(arguments: [String]) throws {
    var arguments = arguments
    func option(_ name: String, default value: Int) -> Int {
        guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count,
            let parsed = Int(arguments[index + 1])
        else { return value }
        arguments.removeSubrange(index...(index + 1))
        return parsed
    }
    let adverts = option("--adverts", default: 10_000_000)
    let iterations = option("--iterations", default: 3)
    let capturePath = arguments.first ?? "Benchmarks/out/adverts-1m.pcap"
    guard FileManager.default.fileExists(atPath: capturePath) else {
        fail("no capture at \(capturePath): run python3 Benchmarks/generate-capture.py first")
    }

    // ---------------------------------------------------------------- runs, interleaved, best of N
    var best: [String: Double] = [:]
    var lost: [String: UInt64] = [:]
    var engineRun: Bench.EngineRun?
    let bench = Bench(adverts: adverts, capturePath: capturePath)
    var decodedReports: UInt64 = 0
    let rotatingWorkload = RotatingWorkload()
    var rotatingAllocations: UInt64 = 0
    var rotatingSightings = (0, 0)
    func keep(_ name: String, _ value: Double) { best[name] = min(best[name] ?? .infinity, value) }
    for _ in 0..<iterations {
        keep("ring1", bench.ringSingleThread())
        keep("deque1", bench.dequeSingleThread())
        let (ring2, ringLost) = bench.ringTwoThreads()
        keep("ring2", ring2)
        lost["ring2"] = ringLost
        let (deque2, dequeLost) = bench.dequeTwoThreads()
        keep("deque2", deque2)
        lost["deque2"] = dequeLost
        keep("generate", bench.generateOnly())
        let engineOnly = bench.ringAndEngine(throughRing: false)
        keep("engine", engineOnly.seconds)
        keep("cafe", bench.ringAndEngine(throughRing: true, beacons: 256).seconds)
        let pipeline = bench.ringAndEngine(throughRing: true)
        keep("pipeline", pipeline.seconds)
        engineRun = pipeline
        let fixedRun = bench.engine(with: rotatingWorkload.fixed, heard: rotatingWorkload.heardWithFixed)
        let rotatingRun = bench.engine(with: rotatingWorkload.rotating, heard: rotatingWorkload.heardWithRotating)
        keep("fixed10k", fixedRun.seconds)
        keep("rotating10k", rotatingRun.seconds)
        rotatingAllocations = max(rotatingAllocations, rotatingRun.allocations, fixedRun.allocations)
        rotatingSightings = (fixedRun.sightings, rotatingRun.sightings)
        let (decode, reports) = try bench.decodeCapture()
        keep("decode", decode)
        decodedReports = reports
    }

    let ns = { (name: String, count: Int) in best[name]! * 1e9 / Double(count) }
    print("adverts: \(adverts) per run, best of \(iterations) interleaved runs")
    print("")
    print("advert ring vs Mutex<Deque> (capacity 4,096)")
    print("  one thread, push 64 / take 64:")
    print("    AdvertRing       " + formatRate(adverts, best["ring1"]!))
    print("    Mutex<Deque>     " + formatRate(adverts, best["deque1"]!) + String(format: "   ring is %.2fx faster", best["deque1"]! / best["ring1"]!))
    print("  two threads, producer flat out, consumer draining:")
    print("    AdvertRing       " + formatRate(adverts, best["ring2"]!) + "   lost (overwritten): \(lost["ring2"]!)")
    print("    Mutex<Deque>     " + formatRate(adverts, best["deque2"]!) + "   lost (dropped): \(lost["deque2"]!)"
        + String(format: "   ring is %.2fx faster", best["deque2"]! / best["ring2"]!))
    print("")
    let decodeNs = best["decode"]! * 1e9 / Double(decodedReports)
    let engineNs = ns("engine", adverts) - ns("generate", adverts)
    let pipelineNs = ns("pipeline", adverts) - ns("generate", adverts)
    print("engine, all 65,536 minors missing")
    print(String(format: "  decoder's own cost (CaptureFile + AdvertDecoder, %@)  %6.1f ns/report", capturePath, decodeNs))
    print(String(format: "  engine alone, all 65,536 in range                 %6.1f ns/advert  (%.2fx the decoder)", engineNs, engineNs / decodeNs))
    print(String(format: "  ring + engine, all 65,536 in range                %6.1f ns/advert  (%.2fx the decoder)  %.1f M adverts/s",
                 pipelineNs, pipelineNs / decodeNs, 1e3 / pipelineNs))
    let cafeNs = ns("cafe", adverts) - ns("generate", adverts)
    print(String(format: "  ring + engine, 256 beacons in range (a busy café)   %6.1f ns/advert  (%.2fx the decoder)  %.1f M adverts/s",
                 cafeNs, cafeNs / decodeNs, 1e3 / cafeNs))
    print(String(format: "  (generating the synthetic adverts: %.1f ns/advert, subtracted above)", ns("generate", adverts)))
    let run = engineRun!
    print("  sightings: \(run.counters.enters) enter, \(run.counters.updates) update, \(run.counters.exits) exit; visits opened \(run.counters.visitsOpened)")
    let growth = run.residentAtEnd - run.residentAfterWarmUp
    print(String(format: "  resident memory after warm-up %.1f MiB, at the end %.1f MiB (%+d KiB over %d adverts)",
                 Double(run.residentAfterWarmUp) / 1_048_576, Double(run.residentAtEnd) / 1_048_576, growth / 1024, adverts))
    print("  allocations after warm-up: \(run.steadyAllocations)")

    print("")
    let steady = adverts - adverts / 4
    let fixedNs = best["fixed10k"]! * 1e9 / Double(steady)
    let rotatingNs = best["rotating10k"]! * 1e9 / Double(steady)
    print("engine, 10,000 missing bikes, region without a major, 4,096 beacons heard (256 of them missing)")
    print(String(format: "  as 10,000 fixed beacons                            %6.1f ns/advert", fixedNs))
    print(String(format: "  as 10,000 rotating beacons (170,000 identities)    %6.1f ns/advert  (%.2fx the fixed; goal ≤ 1.2)",
                 rotatingNs, rotatingNs / fixedNs))
    print("  sightings: \(rotatingSightings.0) fixed, \(rotatingSightings.1) rotating; allocations after warm-up: \(rotatingAllocations)")
    if rotatingAllocations > 0 { fail("the engine allocated \(rotatingAllocations) times per run with 10,000 bikes") }
    if rotatingSightings.0 == 0 || rotatingSightings.0 != rotatingSightings.1 {
        fail("the fixed and rotating runs made \(rotatingSightings.0) and \(rotatingSightings.1) sightings")
    }

    if run.steadyAllocations > 0 { fail("the engine allocated \(run.steadyAllocations) times in its steady state") }
    if growth > 1_048_576 { fail("resident memory grew by \(growth / 1024) KiB after warm-up") }
}

try runBenchmarks(arguments: Array(CommandLine.arguments.dropFirst()))
