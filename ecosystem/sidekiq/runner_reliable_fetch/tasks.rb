# frozen_string_literal: true

# The Sidekiq runner's job (../runner/tasks.rb) with gitlab-sidekiq-fetcher's reliable fetch, set up as its README's
# "Configuration" says, in Sidekiq's configure_server block. Its cleanup of dead workers' working queues runs at
# most once per cleanup_interval (default 1 hour, the lease key's expiry) and each process tries to take that lease
# at most once per lease_interval (default 2 minutes): both are lowered so that a dead worker's job is recovered
# within a run, once its 60 s heartbeat (a constant of the gem) has expired.
require 'sidekiq-reliable-fetch'
require_relative '../runner/tasks'
require_relative 'settings'

Sidekiq.configure_server do |config|
  config.options[:cleanup_interval] = ReliableFetchSettings::CLEANUP_INTERVAL_S
  config.options[:lease_interval] = ReliableFetchSettings::LEASE_INTERVAL_S
  Sidekiq::ReliableFetch.setup_reliable_fetch!(config)
end
