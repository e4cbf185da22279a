# frozen_string_literal: true

# The Sidekiq runner (docs/runtime-faults.md): describe, enqueue JOBS_FILE, worker, inspect JOBS_FILE, with Sidekiq's
# open-source fetch, BRPOP, which takes a job off its queue in Redis: a job in progress lives only in the process
# that runs it. Sidekiq gives no other worker a job a silent process holds, so the runner has no lease to declare;
# lease_s is the reliable fetch's heartbeat (../runner_reliable_fetch), so that the two rows take the same pause and
# the same slow handler side by side. Nothing runs a lost job again: the recovery window only bounds the wait.
require_relative 'sidekiq_runner'

BRPOP = 'Sidekiq uses BRPOP to fetch a job from the queue in Redis. This is very efficient and simple but it has ' \
        'one drawback: the job is now removed from Redis. If Sidekiq crashes while processing that job, it is lost ' \
        'forever.'

def describe
  require 'sidekiq'
  {
    library: 'sidekiq', version: Sidekiq::VERSION,
    settings: [*SidekiqRunner::SETTINGS,
               { name: 'fetch', value: 'Sidekiq::BasicFetch (BRPOP), the default',
                 doc: "#{SidekiqRunner::WIKI}/Reliability" }],
    lease_s: 60.0,
    recovery_window_s: 15.0,
    faults: %w[kill9 startup pause broker_restart_aof broker_restart_volatile net_cut slow_handler],
    promises: [],
    caveats: [{ outcome: 'lost', faults: %w[kill9 startup], quote: BRPOP, doc: "#{SidekiqRunner::WIKI}/Reliability" }],
    inspect_doc: "#{SidekiqRunner::WIKI}/API",
    policies: [],
    recovery_rules: []
  }
end

SidekiqRunner.serve(method(:describe))
