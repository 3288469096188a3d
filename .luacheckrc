-- luacheck configuration for rehearse scenario scripts and plugin bundles.
stds.rehearse = {
  read_globals = {
    "scaleset", "health", "phase", "fault", "at", "expect", "update_model", "cancel",
    "manual_upgrade", "start_os_upgrade", "start_extension_upgrade", "scale", "duration",
    "deferral", "release_image", "approve_os_upgrade",
  },
}
std = "lua54+rehearse"
-- The sandbox has no io, debug, package, dofile, loadfile or os.execute: flag their use.
not_globals = { "io", "debug", "package", "dofile", "loadfile" }
exclude_files = { "scripts/types/*.lua" }
max_line_length = 120
-- Callbacks receive (vm, now) whether they use them or not.
unused_args = false
