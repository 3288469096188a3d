/// What a rolling upgrade sees when it starts (health, metrics, phases) and the plan made from it.
extension Simulation {
    /// What the planner sees of the scale set now: health, model and metrics (or the phase
    /// source's answer) of every present instance.
    func planInputs() throws -> [PlanInput] {
        let rich = probeSettings?.richStates ?? false
        var metricsInUse = setup.behaviours.phases != nil
        var missing: [Int] = []  // candidates whose latest answer was not Healthy
        var inputs = try presentInstances.map { vm in
            let candidate = vm.modelVersion != modelVersion && !vm.protectFromScaleSetActions
            // Custom metrics (and the phase() shorthand, which stands for them) count only from an
            // answer whose state is Healthy (SPEC §3).
            let answeredHealthy = !probes.plan.probing || probes.last[vm.id]?.state == .healthy
            var metrics: CustomMetrics?
            if answeredHealthy {
                metrics = probes.last[vm.id]?.metrics
                if probes.last[vm.id]?.metricsDeferred == true, let payload = try setup.behaviours.health?.latestMetrics(of: vm) {
                    var diagnostics: [WireDiagnostic] = []
                    metrics = CustomMetrics.parse(payload, diagnostics: &diagnostics)
                    warn(diagnostics, about: vm.id)
                }
                if let stated = try setup.behaviours.phases?.metrics(of: vm, at: now) { metrics = stated }
                if metrics != nil { metricsInUse = true }
            } else if candidate && rich {
                missing.append(vm.id)
            }
            var input = PlanInput(id: vm.id, zone: vm.zone, faultDomain: vm.faultDomain, updateDomain: vm.updateDomain,
                                  unhealthy: health(of: vm.id).countsAsUnhealthy, upToDate: vm.modelVersion == modelVersion,
                                  protected: vm.protectFromScaleSetActions, phase: metrics?.phase, skip: metrics?.skipUpgrade ?? false)
            input.failed = vm.lastUpgradeFailed
            return input
        }
        // Naming them matters only where phases or skips are in use at all.
        guard metricsInUse else { return inputs }
        if !missing.isEmpty && counters.warned.insert("metricsMissing:\(missing)").inserted {
            emit(.metricsMissing(instances: missing))
        }
        let flagged = Set(missing)
        for i in inputs.indices where flagged.contains(inputs[i].id) { inputs[i].withoutMetrics = true }
        return inputs
    }

    /// The batches a rolling upgrade started now would run, without running time. With
    /// `assumingModelChange`, every instance counts as out of date (as if the model changed now).
    public func planNow(assumingModelChange: Bool = false) throws -> UpgradePlan {
        var inputs = try planInputs()
        if assumingModelChange { for i in inputs.indices { inputs[i].upToDate = false } }
        return Planner.plan(inputs, capacity: inputs.count, zonal: !definition.zones.isEmpty,
                            orchestration: definition.orchestration, faultDomains: definition.effectiveFaultDomains,
                            policy: policy.rolling, takesDown: !policy.rolling.maxSurge)
    }
}
