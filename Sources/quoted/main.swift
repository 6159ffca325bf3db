import Logging

// Placeholder until the daemon lands: says so and exits non-zero.
let logger = Logger(label: "quoted")
logger.error("quoted: the daemon is not built yet; this placeholder only reports that")
