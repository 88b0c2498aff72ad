-- Argo CD health check for kto.dev/v1 KafkaRebalance (kafka-topic-operator).
--
-- The state is the type of the first condition whose status is "True" (PendingProposal,
-- ProposalReady, Rebalancing, Ready, Stopped, NotReady), its reason and message say why; a
-- kstatus Reconciling (PendingProposal, Rebalancing) or Stalled (NotReady) condition follows.
-- The message shown is "<reason>: <the operator's message>".
--
-- Only what Argo CD gives a health script by default is used (no useOpenLibs): the base
-- library and table.

local ASK = "kto.dev/rebalance"
local AUTO_APPROVAL = "kto.dev/rebalance-auto-approval"

local function kubectl_annotate(metadata, value)
  local command = "kubectl annotate kafkarebalance " .. (metadata.name or "NAME") .. " "
    .. ASK .. "=" .. value
  if metadata.namespace ~= nil then
    command = command .. " -n " .. metadata.namespace
  end
  return command
end

-- status.progress while replicas move: "partitions 3 done, 1 in flight, 8 remaining; ...".
local function progress_of(progress)
  if progress == nil then
    return ""
  end
  local said = " (partitions " .. (progress.partitionsDone or 0) .. " done, "
    .. (progress.partitionsInFlight or 0) .. " in flight, "
    .. (progress.partitionsRemaining or 0) .. " remaining; leader elections "
    .. (progress.leaderElectionsDone or 0) .. " done, "
    .. (progress.leaderElectionsRemaining or 0) .. " remaining"
  if progress.estimatedSecondsLeft ~= nil then
    said = said .. "; about " .. progress.estimatedSecondsLeft .. " s left"
  end
  return said .. ")"
end

local function assess(obj)
  local metadata = obj.metadata or {}
  local annotations = metadata.annotations or {}
  local status = obj.status or {}
  local state, stalled, reconciling
  for _, condition in ipairs(status.conditions or {}) do
    if condition.status == "True" then
      if state == nil then
        state = condition
      elseif condition.type == "Stalled" then
        stalled = condition
      elseif condition.type == "Reconciling" then
        reconciling = condition
      end
    end
  end
  if state == nil then
    return "Progressing", "Waiting for the operator to plan a proposal"
  end
  -- approve, stop or refresh asked and not yet taken (the operator removes the annotation).
  if annotations[ASK] ~= nil then
    return "Progressing", ASK .. "=" .. annotations[ASK]
      .. " asked: waiting for the operator to act on it"
  end
  -- A changed spec is planned again, except while replicas move (they finish first).
  local generation = tonumber(metadata.generation)
  local observed = tonumber(status.observedGeneration)
  if generation ~= nil and observed ~= nil and observed < generation
      and state.type ~= "Rebalancing" then
    return "Progressing", "The spec changed (generation " .. generation
      .. "): waiting for the operator to plan a new proposal"
  end
  local said = state.reason or state.type
  if state.message ~= nil and state.message ~= "" then
    said = said .. ": " .. state.message
  end
  if state.type == "PendingProposal" then
    return "Progressing", said
  end
  if state.type == "Rebalancing" then
    return "Progressing", said .. progress_of(status.progress)
  end
  if state.type == "ProposalReady" then
    local auto = annotations[AUTO_APPROVAL]
    if auto == "true" or auto == "True" or auto == "TRUE" then
      return "Progressing", said .. " (" .. AUTO_APPROVAL .. ": the rebalance starts)"
    end
    -- Waits for a person: nothing moves until the proposal is approved.
    return "Suspended", said .. "; approve it with: " .. kubectl_annotate(metadata, "approve")
  end
  if state.type == "Ready" then
    return "Healthy", said
  end
  if state.type == "Stopped" then
    -- Stopped on request: the rest of the proposal waits for a person to plan again.
    return "Suspended", said .. "; plan the rest with: " .. kubectl_annotate(metadata, "refresh")
  end
  if state.type == "NotReady" then
    return "Degraded", said
  end
  -- A state this script does not know: as the operator's kstatus conditions say.
  if stalled ~= nil then
    return "Degraded", said
  end
  if reconciling ~= nil then
    return "Progressing", said
  end
  return "Unknown", "Unknown state " .. state.type .. " (" .. said .. ")"
end

local status, message = assess(obj)
return { status = status, message = message }
