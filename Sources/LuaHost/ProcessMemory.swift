internal import CLuaSupport

/// Process-wide memory settings for a program that runs scenario after scenario.
public enum ProcessMemory {
    /// Keeps memory freed by one run (its Lua slabs, its event list) in the process for the
    /// next one instead of handing it back to the system, so a sweep or a benchmark does not
    /// fault the same pages in on every run. Call once, at start.
    public static func keepFreedMemory() { rh_keep_freed_memory() }
}
