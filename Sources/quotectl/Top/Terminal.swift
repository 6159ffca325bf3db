import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The controlling terminal for a full-screen view: raw keys without echo, the alternate
/// screen, a hidden cursor, its size; all given back by ``restore()``.
final class Terminal {
    private var saved = termios()
    private var raw = false

    /// Whether standard input and output are both a terminal.
    static var isInteractive: Bool { isatty(0) == 1 && isatty(1) == 1 }

    /// Takes the terminal: keys one by one, unechoed (Ctrl-C still interrupts), the alternate
    /// screen, cursor hidden.
    init() {
        if tcgetattr(0, &saved) == 0 {
            var settings = saved
            settings.c_lflag &= ~tcflag_t(ICANON | ECHO)
            raw = tcsetattr(0, TCSANOW, &settings) == 0
        }
        write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[2J")
    }

    /// Gives the terminal back as it was.
    func restore() {
        write("\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l")
        if raw { tcsetattr(0, TCSANOW, &saved) }
        raw = false
    }

    /// Columns and rows, or 80x24 when the terminal does not say.
    var size: Size { Self.size }

    /// A terminal's size.
    struct Size: Equatable {
        var columns: Int
        var rows: Int
    }

    /// Standard output's size, or 80x24 when it does not say.
    static var size: Size {
        var window = winsize()
        guard ioctl(1, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0 else { return Size(columns: 80, rows: 24) }
        return Size(columns: Int(window.ws_col), rows: Int(window.ws_row))
    }

    /// Standard output's width in columns.
    static var columns: Int { size.columns }

    /// Draws `lines` over the previous frame from the top left, clearing what each line and
    /// the frame leave over, in one write (no flicker); `clear` wipes the screen first (after a
    /// resize).
    func draw(_ lines: [String], rows: Int, clear: Bool) {
        var frame = clear ? "\u{1B}[2J\u{1B}[H" : "\u{1B}[H"
        for line in lines.prefix(rows) { frame += line + "\u{1B}[K\r\n" }
        frame += "\u{1B}[J"
        write(frame)
    }

    /// Waits up to `timeout` for a key; returns it, or `nil` when none came (or a signal
    /// interrupted the wait).
    func key(within timeout: Duration) -> UInt8? {
        var descriptor = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(
            max(0, timeout.components.seconds * 1_000 + timeout.components.attoseconds / 1_000_000_000_000_000))
        guard poll(&descriptor, 1, milliseconds) > 0 else { return nil }
        var byte: UInt8 = 0
        return read(0, &byte, 1) == 1 ? byte : nil
    }

    private func write(_ text: String) {
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(1, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { if errno == EINTR { continue } else { return } }
                offset += written
            }
        }
    }
}
