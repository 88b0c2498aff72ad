-- Argo CD health check for kto.dev/v1 KafkaTopic (kafka-topic-operator).
--
-- The operator writes status.conditions in kstatus' form: Ready first (True when the topic is as
-- the spec declares; otherwise its reason says why), then Reconciling or Stalled with the same
-- reason and message. The message shown is "<reason>: <the operator's message>".
--
-- Only what Argo CD gives a health script by default is used (no useOpenLibs): the base
-- library, table and os.time. There is no string library, so a time is not parsed: the cutoff
-- is formatted as Kubernetes writes times (UTC, to the second: 2026-01-01T00:00:00Z), which
-- sort as text in time order. It is computed here from os.time() because Argo CD's os.date
-- formats in the controller's local time zone.

-- A deletion that waits on offline brokers (DeletionIneligible) is Progressing for this long
-- after its Ready condition last changed (usually when the deletion began), then Degraded.
local DELETION_INELIGIBLE_DEGRADED_AFTER_SECONDS = 600

-- The operator or Kafka's controller is still acting on the spec.
local PROGRESSING = {
  Reconciling = true,
  ReassignmentInProgress = true,
  BrokersUnavailable = true,
  DeletionInProgress = true,
}
-- The cluster does not answer: the operator waits for it and reconciles as soon as it does.
local OUTAGES = { ZooKeeperUnavailable = "ZooKeeper", KafkaUnavailable = "Kafka" }
-- Nothing changes until someone fixes the spec, the cluster or another writer's data.
local DEGRADED = {
  InvalidSpec = true,
  Conflict = true,
  NotSupported = true,
  UnreadableZNode = true,
  PartitionsOffline = true,
  DeletionDisabled = true,
}
-- Left alone on purpose until an annotation is removed: kto.dev/pause-reconciliation: "true"
-- (paused), kto.dev/managed: "false" (the topic is not the operator's to change).
local SUSPENDED = { ReconciliationPaused = true, Unmanaged = true }
local DELETION = { DeletionInProgress = true, DeletionIneligible = true, DeletionDisabled = true }

local function floor_div(a, b)
  return (a - a % b) / b
end

local function two_digits(n)
  if n < 10 then
    return "0" .. n
  end
  return "" .. n
end

-- Seconds since the epoch as Kubernetes writes a time (days to a date: the proleptic Gregorian
-- calendar's civil-from-days conversion).
local function utc_time(seconds)
  seconds = seconds - seconds % 1
  local days = floor_div(seconds, 86400)
  local rest = seconds - days * 86400
  local z = days + 719468
  local era = floor_div(z, 146097)
  local doe = z - era * 146097
  local yoe = floor_div(doe - floor_div(doe, 1460) + floor_div(doe, 36524)
    - floor_div(doe, 146096), 365)
  local doy = doe - (365 * yoe + floor_div(yoe, 4) - floor_div(yoe, 100))
  local mp = floor_div(5 * doy + 2, 153)
  local day = doy - floor_div(153 * mp + 2, 5) + 1
  local month = mp + 3
  if mp >= 10 then
    month = mp - 9
  end
  local year = yoe + era * 400
  if month <= 2 then
    year = year + 1
  end
  return year .. "-" .. two_digits(month) .. "-" .. two_digits(day) .. "T"
    .. two_digits(floor_div(rest, 3600)) .. ":" .. two_digits(floor_div(rest % 3600, 60)) .. ":"
    .. two_digits(rest % 60) .. "Z"
end

local function minutes(seconds)
  if seconds % 60 == 0 then
    return (seconds / 60) .. " min"
  end
  return seconds .. " s"
end

-- Whether the time Kubernetes wrote (since) is longer ago than the threshold; a time in
-- another form than Kubernetes writes counts as long ago, so a stuck deletion is never hidden.
local function waited_too_long(since)
  if type(since) ~= "string" or #since ~= 20 then
    return true
  end
  return since <= utc_time(os.time() - DELETION_INELIGIBLE_DEGRADED_AFTER_SECONDS)
end

local function assess(obj)
  local metadata = obj.metadata or {}
  local status = obj.status
  if status == nil or status.conditions == nil then
    return "Progressing", "Waiting for the operator to reconcile the topic"
  end
  local ready, stalled, reconciling
  for _, condition in ipairs(status.conditions) do
    if condition.type == "Ready" and ready == nil then
      ready = condition
    elseif condition.type == "Stalled" and condition.status == "True" then
      stalled = condition
    elseif condition.type == "Reconciling" and condition.status == "True" then
      reconciling = condition
    end
  end
  if ready == nil then
    return "Progressing", "Waiting for the operator to reconcile the topic"
  end
  local reason = ready.reason or ""
  local said = reason
  if ready.message ~= nil and ready.message ~= "" then
    said = reason .. ": " .. ready.message
  end
  if OUTAGES[reason] ~= nil then
    return "Progressing", said .. " (an outage: the operator waits for " .. OUTAGES[reason]
      .. " to answer and reconciles the topic then)"
  end
  if metadata.deletionTimestamp ~= nil and not DELETION[reason] then
    return "Progressing", "Being deleted (" .. said .. ")"
  end
  -- A spec the operator has not reconciled yet: whatever Ready says is about an older one.
  local generation = tonumber(metadata.generation)
  local observed = tonumber(status.observedGeneration or ready.observedGeneration)
  if generation ~= nil and observed ~= nil and observed < generation then
    return "Progressing", "Waiting for the operator to reconcile generation " .. generation
      .. " (last reconciled: " .. observed .. ")"
  end
  if ready.status == "True" then
    return "Healthy", said
  end
  if SUSPENDED[reason] then
    return "Suspended", said
  end
  if PROGRESSING[reason] then
    return "Progressing", said
  end
  if reason == "DeletionIneligible" then
    local limit = minutes(DELETION_INELIGIBLE_DEGRADED_AFTER_SECONDS)
    if waited_too_long(ready.lastTransitionTime) then
      return "Degraded", said .. " (waiting for more than " .. limit .. ")"
    end
    return "Progressing", said .. " (Degraded if still waiting after " .. limit .. ")"
  end
  if DEGRADED[reason] then
    return "Degraded", said
  end
  -- A reason this script does not know: as the operator's kstatus conditions say.
  if stalled ~= nil then
    return "Degraded", said
  end
  if reconciling ~= nil or ready.status == "Unknown" then
    return "Progressing", said
  end
  return "Degraded", said
end

local status, message = assess(obj)
return { status = status, message = message }
