# frozen_string_literal: true

# The reliable fetch's settings, shared by its worker (tasks.rb) and its description (runner.rb).
module ReliableFetchSettings
  CLEANUP_INTERVAL_S = 5
  LEASE_INTERVAL_S = 1
  HEARTBEAT_LIFESPAN_S = 60 # Sidekiq::BaseReliableFetch::HEARTBEAT_LIFESPAN, a constant
  MAX_RETRIES_AFTER_INTERRUPTION = 3 # the gem's default, left as it is
end
