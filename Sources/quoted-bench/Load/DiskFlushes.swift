import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The cache flushes a block device has completed (`/sys/dev/block/MAJOR:MINOR/stat`, its 16th
/// field, Linux 5.5 and later): what each `fdatasync` of a file on it costs the disk. Counted for
/// the whole device, whoever asked, so a figure is quoted's only on an otherwise quiet machine.
struct DiskFlushes {
    /// The device's statistics file.
    let statPath: String

    /// The device that holds `directory`, when it is a block device whose statistics count
    /// flushes; `nil` for a file system of no device (tmpfs, overlay) or an older kernel.
    init?(holding directory: URL) {
        var status = stat()
        guard stat(directory.path, &status) == 0 else { return nil }
        let device = UInt64(status.st_dev)
        // glibc's encoding of a device number (`gnu_dev_major` and `gnu_dev_minor`).
        let major = ((device >> 8) & 0xfff) | (UInt64(UInt32(truncatingIfNeeded: device >> 32)) & ~0xfff)
        let minor = (device & 0xff) | (UInt64(UInt32(truncatingIfNeeded: device >> 12)) & ~0xff)
        guard major != 0 else { return nil }
        statPath = "/sys/dev/block/\(major):\(minor)/stat"
        guard count() != nil else { return nil }
    }

    /// The flushes completed since the device came up; `nil` if they cannot be read.
    func count() -> UInt64? {
        guard let line = try? String(contentsOfFile: statPath, encoding: .utf8) else { return nil }
        let fields = line.split(whereSeparator: \.isWhitespace)
        guard fields.count > 15 else { return nil }
        return UInt64(fields[15])
    }
}
