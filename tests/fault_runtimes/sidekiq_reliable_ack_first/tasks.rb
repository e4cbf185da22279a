# frozen_string_literal: true

# A broken copy of the sidekiq_reliable_fetch runner (ecosystem/sidekiq/runner_reliable_fetch): the runner's own server
# middleware (AlkstoreJobHash, ecosystem/sidekiq/runner/tasks.rb) also acknowledges each job, emptying the process's
# working queue, before the handler runs, so a process killed in a job leaves nothing for the cleanup to push back.
# The checker must find the job lost against the runner's promise.
require_relative '../../../ecosystem/sidekiq/runner_reliable_fetch/tasks'

# Acknowledges the job before it runs (one job at a time: concurrency 1, so the working queue holds only it).
module AlkstoreAckFirst
  def call(worker, job, queue)
    Sidekiq.redis { |conn| conn.del(Sidekiq::BaseReliableFetch.working_queue_name("queue:#{queue}")) }
    super
  end
end

AlkstoreJobHash.prepend(AlkstoreAckFirst)
