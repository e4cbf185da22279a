# frozen_string_literal: true

# The job of the Sidekiq runners (runner.rb): the file `sidekiq -r` loads in each worker. The handler writes the
# ledger around a real sleep (../../kit/runner_protocol.rb); a server middleware, Sidekiq's documented hook around
# each job, hands the handler the job's hash, whose retry_count is Sidekiq's own attempt counter.
require 'sidekiq'
require_relative '../../kit/runner_protocol'

# Sidekiq's server middleware: keeps the job's hash for the handler of this thread.
class AlkstoreJobHash
  def call(_worker, job, _queue)
    Thread.current[:alkstore_job] = job
    yield
  end
end

Sidekiq.configure_server do |config|
  config.server_middleware { |chain| chain.add(AlkstoreJobHash) }
end

# The one job class: its arguments are the harness's job (id, duration, fail flag).
class AlkstoreJob
  include Sidekiq::Worker

  def perform(id, duration_s, fail)
    retries = Thread.current[:alkstore_job]&.fetch('retry_count', nil)
    RunnerProtocol.perform(id, duration_s, fail, retries.nil? ? 1 : retries + 2)
  end
end
