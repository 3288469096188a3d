---@meta rehearse
-- LuaLS definitions for rehearse scenario scripts and plugin bundles. Point your editor at this
-- folder (scripts/.luarc.json does) to get completion and type checks.

---@class rehearse.Model
---@field version integer  model version the instance runs (1 = the starting model)
---@field image? string
---@field [string] string|integer

---@class rehearse.VM
---@field id integer          instanceId: 0, 1, 2, ... never reused
---@field name string         "<scaleset>_<id>"
---@field zone? string        availability zone, nil in a regional scale set
---@field faultDomain integer
---@field updateDomain integer
---@field model rehearse.Model
---@field state table         per-instance data the script may keep between calls

---@class rehearse.RollingUpgradePolicy
---@field maxBatchInstancePercent? integer              5-100, default 20
---@field maxUnhealthyInstancePercent? integer          5-100, default 20
---@field maxUnhealthyUpgradedInstancePercent? integer  0-100, default 20
---@field pauseTimeBetweenBatches? string               ISO 8601, default "PT0S"
---@field prioritizeUnhealthyInstances? boolean
---@field enableCrossZoneUpgrade? boolean
---@field maxSurge? boolean|"true"|"false"
---@field MaxSurge? boolean|"true"|"false"
---@field rollbackFailedInstancesOnPolicyBreach? boolean

---@class rehearse.AutomaticOSUpgradePolicy
---@field enableAutomaticOSUpgrade? boolean   a released platform image upgrades the scale set
---@field disableAutomaticRollback? boolean   keep instances that are not Healthy on the new image
---@field useRollingUpgradePolicy? boolean    batch with rollingUpgradePolicy, not the default 20/20/20
---@field osRollingUpgradeDeferral? boolean   instances may defer (see deferral)

---@class rehearse.UpgradePolicy
---@field mode "Automatic"|"Manual"|"Rolling"
---@field rollingUpgradePolicy? rehearse.RollingUpgradePolicy
---@field automaticOSUpgradePolicy? rehearse.AutomaticOSUpgradePolicy

---@class rehearse.HealthExtension
---@field protocol "tcp"|"http"|"https"
---@field port? integer              1-65535, required for tcp
---@field requestPath? string        required for http/https
---@field intervalInSeconds? integer 5-60, default 5
---@field numberOfProbes? integer    1-24, default 1
---@field gracePeriod? integer       5-14400 s, default interval x probes
---@field typeHandlerVersion? "1.0"|"2.0"  binary or rich states (default "2.0")

---@class rehearse.Timings
---@field upgrade? string|number   restart/reimage/redeploy upgrade, default "PT2M"
---@field inPlace? string|number   in-place upgrade (extensions, data disks), default "PT30S"
---@field create? string|number    new instance, default "PT2M30S"
---@field delete? string|number    default "PT30S"
---@field rollback? string|number  default "PT2M"

---@class rehearse.ScaleSet
---@field name string
---@field capacity integer
---@field zones? string[]
---@field orchestration? "Uniform"|"Flexible"
---@field model? table<string, string|number|boolean>
---@field upgradePolicy? rehearse.UpgradePolicy
---@field healthExtension? rehearse.HealthExtension
---@field loadBalancerProbe? boolean     Uniform only: a load-balancer probe as the health source
---@field protected? integer[]           protectFromScaleSetActions
---@field protectedFromScaleIn? integer[]
---@field quota? integer                 most instances that may exist at once (MaxSurge)
---@field faultDomains? integer
---@field updateDomains? integer
---@field timings? rehearse.Timings
---@field location? string

---@class rehearse.HealthAnswer
---@field applicationHealthState? "Healthy"|"Unhealthy"|string
---@field customMetrics? string|table    JSON string (wire form) or a table
---@field status? integer                with status: a raw HTTP answer
---@field body? string

---@alias rehearse.HealthFunction fun(vm: rehearse.VM, now: number): rehearse.HealthAnswer|string|nil
---@alias rehearse.FaultFunction fun(vm: rehearse.VM, op: "upgrade"|"create"|"delete"|"rollback", now: number): {fail?: boolean, duration?: string|number}|nil

---Describes the scale set (exactly once per scenario).
---@param definition rehearse.ScaleSet
function scaleset(definition) end

---Answers every health probe. Return a table, a raw body string, { status = 503, body = "..." } or nil (no answer).
---@param fn rehearse.HealthFunction
function health(fn) end

---Shorthand for the rollingUpgrade custom metric: called for each instance when a rolling upgrade
---starts. Return the PhaseOrderingNumber, the metric itself ({ PhaseOrderingNumber = 1 },
---{ SkipUpgrade = true }) or nil to keep what the instance's metrics say.
---@param fn fun(vm: rehearse.VM): integer|{ PhaseOrderingNumber: integer?, SkipUpgrade: boolean? }|nil
function phase(fn) end

---Answers the notice of an automatic OS upgrade (needs automaticOSUpgradePolicy with
---enableAutomaticOSUpgrade and osRollingUpgradeDeferral): true defers it until approve_os_upgrade,
---a duration ("PT10M" or seconds) approves it by itself after that long, false or nil lets it go ahead.
---@param fn fun(vm: rehearse.VM, now: number): boolean|string|number|nil
function deferral(fn) end

---Decides the fate of every operation: nil, { fail = true } or { duration = "PT5M" }.
---@param fn rehearse.FaultFunction
function fault(fn) end

---Runs fn at a virtual time (ISO 8601 duration or seconds).
---@param time string|number
---@param fn fun()
function at(time, fn) end

---Checks the final status and the run.
---@param expectations {code?: string, errorCode?: string, successful?: integer, failed?: integer, inProgress?: integer, pending?: integer, skipped?: integer[], protected?: integer[], minHealthy?: integer, upgrades?: integer, rolledBack?: integer}
function expect(expectations) end

---Updates the scale set model; no argument (or no change) is a generic update, which restarts a rolling upgrade.
---@param changes? table<string, string|number|boolean>
function update_model(changes) end

---Cancels the running rolling upgrade (an error when none runs).
function cancel() end

---Upgrades the given instances at once, or every instance with "*".
---@param ids integer[]|"*"
function manual_upgrade(ids) end

---An OS image upgrade: a rolling upgrade in any mode.
---@param opts? {image?: string}
function start_os_upgrade(opts) end

---A new platform image version is released: with automatic OS upgrades on and a model on the
---latest image version, an automatic OS image upgrade starts.
---@param opts {version: string}
function release_image(opts) end

---Approves deferred OS upgrades (ApproveRollingUpgrade) of the given instances, or every one with "*".
---@param ids integer[]|"*"
function approve_os_upgrade(ids) end

---An extension upgrade (in place): a rolling upgrade in any mode.
---@param opts? {version?: string}
function start_extension_upgrade(opts) end

---Scales to n instances.
---@param n integer
function scale(n) end

---Seconds in an ISO 8601 duration ("PT1M30S" -> 90).
---@param value string|number
---@return number
function duration(value) end
