import Formats

/// The LuaLS classes and aliases the generated definitions declare: the tables scripts pass and
/// receive (scale set, policy, health extension, hook events and answers, health models).
extension ScriptingAPI {
    static let classes: [LuaClass] = [
        LuaClass(name: "rehearse.Model", fields: [("version", "integer", "model version the instance runs (1 = the starting model)"),
                                                 ("healthExtension", "boolean", "the model has the Application Health extension"),
                                                 ("image?", "string", ""), ("imageReference?", "rehearse.ImageReference", ""),
                                                 ("sku?", "rehearse.Sku", "the VM size, as az vmss show's sku"),
                                                 ("[string]", "string|integer|table", "")]),
        LuaClass(name: "rehearse.VM", fields: [
            ("id", "integer", "instanceId: 0, 1, 2, ... never reused"), ("name", "string", "\"<scaleset>_<id>\""),
            ("zone?", "string", "availability zone, nil in a regional scale set"), ("faultDomain", "integer", ""),
            ("updateDomain", "integer", ""), ("model", "rehearse.Model", ""),
            ("state", "table", "per-instance data the script may keep between calls"),
            ("startedAt", "number", "virtual time (s) of its last (re)start: boot, disruptive upgrade, reimage, rollback, create"),
            ("lastOperation?", "rehearse.Operation", "the last operation that ended on it; nil before any"),
            ("replaces?", "integer", "for an instance MaxSurge created, the id of the instance it replaces"),
        ]),
        LuaClass(name: "rehearse.Operation", fields: [
            ("kind", "\"upgrade\"|\"create\"|\"delete\"|\"rollback\"|\"reimage\"", ""),
            ("outcome", "\"succeeded\"|\"failed\"", ""), ("endedAt", "number", "virtual time (s) it ended"),
        ]),
        LuaClass(name: "rehearse.ImageReference", fields: [
            ("publisher?", "string", ""), ("offer?", "string", ""), ("sku?", "string", "the image's SKU, e.g. \"22_04-lts-gen2\""),
            ("version?", "string", "\"latest\" (the default) or a version that pins the image"),
        ]),
        LuaClass(name: "rehearse.Sku", fields: [("name?", "string", "the VM size, e.g. \"Standard_D2s_v3\""), ("tier?", "string", "")]),
        LuaClass(name: "rehearse.RollingUpgradePolicy", fields: [
            ("maxBatchInstancePercent?", "integer", "5-100, default 20"), ("maxUnhealthyInstancePercent?", "integer", "5-100, default 20"),
            ("maxUnhealthyUpgradedInstancePercent?", "integer", "0-100, default 20"),
            ("pauseTimeBetweenBatches?", "string", "ISO 8601, default \"PT0S\""), ("prioritizeUnhealthyInstances?", "boolean", ""),
            ("enableCrossZoneUpgrade?", "boolean", ""), ("maxSurge?", "boolean|\"true\"|\"false\"", ""),
            ("MaxSurge?", "boolean|\"true\"|\"false\"", ""), ("rollbackFailedInstancesOnPolicyBreach?", "boolean", ""),
        ]),
        LuaClass(name: "rehearse.AutomaticOSUpgradePolicy", fields: [
            ("enableAutomaticOSUpgrade?", "boolean", "a released platform image upgrades the scale set"),
            ("disableAutomaticRollback?", "boolean", "keep instances that are not Healthy on the new image"),
            ("useRollingUpgradePolicy?", "boolean", "batch with rollingUpgradePolicy, not the default 20/20/20"),
            ("osRollingUpgradeDeferral?", "boolean", "instances may defer (see deferral)"),
        ]),
        LuaClass(name: "rehearse.UpgradePolicy", fields: [
            ("mode", "\"Automatic\"|\"Manual\"|\"Rolling\"", ""), ("rollingUpgradePolicy?", "rehearse.RollingUpgradePolicy", ""),
            ("automaticOSUpgradePolicy?", "rehearse.AutomaticOSUpgradePolicy", ""),
        ]),
        LuaClass(name: "rehearse.UpgradePolicyChange", fields: [
            ("mode?", "\"Automatic\"|\"Manual\"|\"Rolling\"", "left out: unchanged"),
            ("rollingUpgradePolicy?", "rehearse.RollingUpgradePolicy", "the fields given change, the others stay"),
            ("automaticOSUpgradePolicy?", "rehearse.AutomaticOSUpgradePolicy", "the fields given change, the others stay"),
        ]),
        LuaClass(name: "rehearse.HealthExtension", fields: [
            ("protocol", "\"tcp\"|\"http\"|\"https\"", ""), ("port?", "integer", "1-65535, required for tcp"),
            ("requestPath?", "string", "required for http/https"), ("intervalInSeconds?", "integer", "5-60, default 5"),
            ("numberOfProbes?", "integer", "1-24, default 1"), ("gracePeriod?", "integer", "5-14400 s, default interval x probes"),
            ("typeHandlerVersion?", "\"1.0\"|\"2.0\"", "binary or rich states (default \"2.0\")"),
        ]),
        LuaClass(name: "rehearse.Timings", fields: [
            ("upgrade?", "string|number", "restart/reimage/redeploy upgrade, default \"PT2M\""),
            ("inPlace?", "string|number", "in-place upgrade (extensions, data disks), default \"PT30S\""),
            ("create?", "string|number", "new instance, default \"PT2M30S\""), ("delete?", "string|number", "default \"PT30S\""),
            ("rollback?", "string|number", "default \"PT2M\""),
        ]),
        LuaClass(name: "rehearse.ScaleSet", fields: [
            ("name", "string", ""), ("capacity", "integer", ""), ("zones?", "string[]", ""),
            ("orchestration?", "\"Uniform\"|\"Flexible\"", ""),
            ("model?", "table<string, string|number|boolean|rehearse.ImageReference|rehearse.Sku>", "attributes; imageReference = {...} and sku = { name = ... } as Azure writes them"),
            ("upgradePolicy?", "rehearse.UpgradePolicy", ""), ("healthExtension?", "rehearse.HealthExtension", ""),
            ("loadBalancerProbe?", "boolean", "Uniform only: a load-balancer probe as the health source"),
            ("protected?", "integer[]", "protectFromScaleSetActions"), ("protectedFromScaleIn?", "integer[]", ""),
            ("quota?", "integer", "most instances that may exist at once (MaxSurge)"),
            ("faultDomains?", "integer", "platformFaultDomainCount; default Uniform regional 5, Uniform zonal 1, Flexible 1"),
            ("updateDomains?", "integer", ""), ("timings?", "rehearse.Timings", ""), ("location?", "string", ""),
            ("lifecycleHooksProfile?", "{lifecycleHooks: rehearse.LifecycleHook[]}", "hooks before automatic OS upgrades and their batches"),
            ("automaticRepairsPolicy?", "{enabled: boolean, gracePeriod?: string, repairAction?: \"Replace\"|\"Restart\"|\"Reimage\"}",
             "automatic instance repairs: gracePeriod PT10M-PT90M (default PT10M), repairAction default Replace"),
            ("from?", "string", "a document to start from (az vmss show, REST, ARM template, Terraform plan), relative to the script"),
            ("resource?", "string", "with from: the template's or plan's scale set, when it holds several"),
            ("parameters?", "string", "with from: a template's parameters file"),
            ("instances?", "string", "az vmss list-instances output: the fleet as it is (ids, zones, domains, latestModelApplied)"),
            ("context?", "table<string, string>", "with from: what resourceGroup(), subscription(), deployment() answer, e.g. { location = \"westeurope\" }"),
        ]),
        LuaClass(name: "rehearse.LifecycleHook", fields: [
            ("type", "\"UpgradeAutoOSScheduling\"|\"UpgradeAutoOSRollingBatchStarting\"", ""),
            ("waitDuration?", "string", "default PT1H (scheduling) or PT30M (batch); at most P2D or PT4H"),
            ("defaultAction?", "\"Approve\"|\"Reject\"", "applied at waitUntil to every target still Waiting; default Approve"),
        ]),
        LuaClass(name: "rehearse.HookEvent", fields: [
            ("name", "string", ""), ("type", "string", ""), ("batch?", "integer", "the batch it stands before (batch events)"),
            ("targets", "integer[]", "instance ids; empty: the scale set itself (scheduling)"), ("names", "string[]", "the targets' names"),
            ("time_created", "number", "seconds"), ("wait_until", "number", "seconds"), ("max_wait_until", "number", "seconds"),
            ("default_action", "\"Approve\"|\"Reject\"", ""),
        ]),
        LuaClass(name: "rehearse.HookAnswer", fields: [
            ("approve?", "\"*\"|integer[]", ""), ("reject?", "\"*\"|integer[]", "applied before approve"),
            ("wait_until?", "string|number", "the new waitUntil, as a duration after time_created"),
            ("after?", "string|number", "on_hook only: the answer arrives this much later"), ("event?", "string", "answer_hook only: the event's name"),
        ]),
        LuaClass(name: "rehearse.HealthBehaviour", fields: [
            ("boot?", "string|number|{min: string, max: string}|{median: string, p95: string}|string[]",
             "from a restart to Healthy: fixed, uniform, log-normal by median and p95, or observed values"),
            ("neverHealthy?", "number", "share of boots (0-1) that never answer Healthy"),
            ("before?", "\"refused\"|\"Unhealthy\"|\"timeout\"", "the answer until Healthy (default refused)"),
            ("episodes?", "{every: string, lasting: string}", "once healthy, Unhealthy for lasting in every window of every"),
        ]),
        LuaClass(name: "rehearse.HealthModel", fields: [
            ("boot", "string|number|{min: string, max: string}|{median: string, p95: string}|string[]", "as in rehearse.HealthBehaviour"),
            ("neverHealthy?", "number", ""), ("before?", "\"refused\"|\"Unhealthy\"|\"timeout\"", ""),
            ("episodes?", "{every: string, lasting: string}", ""),
            ("versions?", "table<string, rehearse.HealthBehaviour>", "v2 = { … }: model version 2's fields that differ"),
        ]),
        LuaClass(name: "rehearse.HealthAnswer", fields: [
            ("applicationHealthState?", "\"Healthy\"|\"Unhealthy\"|string", ""),
            ("customMetrics?", "string|table", "JSON string (wire form) or a table"),
            ("status?", "integer", "with status: a raw HTTP answer"), ("body?", "string", ""),
            ("timeout?", "true", "alone: the application accepted the connection and never replied (30 s)"),
        ]),
    ]

    static let aliases: [(String, String)] = [
        ("rehearse.HealthFunction", "fun(vm: rehearse.VM, now: number): rehearse.HealthAnswer|string|nil"),
        ("rehearse.HealthWrapper", "fun(inner: rehearse.HealthFunction): rehearse.HealthFunction"),
        ("rehearse.FaultFunction", "fun(vm: rehearse.VM, op: \"upgrade\"|\"create\"|\"delete\"|\"rollback\"|\"reimage\", now: number): {fail?: boolean, duration?: string|number}|nil"),
    ]
}
