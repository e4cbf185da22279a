# frozen_string_literal: true

# The Sidekiq runner with gitlab-sidekiq-fetcher's reliable fetch (docs/runtime-faults.md; tasks.rb sets it up as
# the gem's README says): RPOPLPUSH moves a job from its queue to a working queue of the process
# (working:queue:NAME:HOST:PID:NONCE), which removes it when the job is done. Each process refreshes a heartbeat key
# every 20 s that lives 60 s; a cleanup, at most once per cleanup_interval across all processes, pushes the jobs of
# a working queue whose process's heartbeat has expired back to their queue (or, interrupted
# max_retries_after_interruption times, to the interrupted set). lease_s is that 60 s heartbeat. inspect reads the
# working queues and the interrupted set beside Sidekiq's own API (../runner/sidekiq_runner.rb).
require_relative '../runner/sidekiq_runner'
require_relative 'settings'

README = '/usr/share/doc/ruby-gitlab-sidekiq-fetcher/README.md (Debian ruby-gitlab-sidekiq-fetcher 0.8.0-2)'
CODE = '/usr/lib/ruby/vendor_ruby/sidekiq/base_reliable_fetch.rb (Debian ruby-gitlab-sidekiq-fetcher 0.8.0-2)'
RELIABLE = 'There are two strategies implemented: Reliable fetch using rpoplpush command and semi-reliable fetch ' \
           'that uses regular brpop and lpush to pick the job and put it to working queue. The main benefit of ' \
           '"Reliable" strategy is that rpoplpush is atomic, eliminating a race condition in which jobs can be lost.'
IDLE_S = 5 # Sidekiq::ReliableFetch::RELIABLE_FETCH_IDLE_TIMEOUT: an idle fetcher (which runs the cleanup) sleeps 5 s
S = ReliableFetchSettings
RECOVERY_S = S::HEARTBEAT_LIFESPAN_S + S::CLEANUP_INTERVAL_S + IDLE_S

def describe
  require 'sidekiq'
  {
    library: 'sidekiq', version: "#{Sidekiq::VERSION} + gitlab-sidekiq-fetcher #{Gem::Specification.find_by_name('gitlab-sidekiq-fetcher').version}",
    settings: [*SidekiqRunner::SETTINGS,
               { name: 'Sidekiq::ReliableFetch.setup_reliable_fetch!(config)', value: 'reliable fetch (rpoplpush)', doc: README },
               { name: "config.options[:semi_reliable_fetch]", value: false, doc: README },
               { name: 'config.options[:cleanup_interval]', value: S::CLEANUP_INTERVAL_S, doc: CODE },
               { name: 'config.options[:lease_interval]', value: S::LEASE_INTERVAL_S, doc: CODE },
               { name: 'max_retries_after_interruption', value: S::MAX_RETRIES_AFTER_INTERRUPTION, doc: README }],
    lease_s: S::HEARTBEAT_LIFESPAN_S.to_f,
    recovery_window_s: (RECOVERY_S + 20).to_f,
    faults: %w[kill9 startup pause broker_restart_aof broker_restart_volatile net_cut slow_handler],
    promises: [{ outcome: 'lost', faults: %w[kill9 startup pause], max: 0, quote: RELIABLE, doc: README }],
    caveats: [],
    inspect_doc: README,
    policies: [{ state: 'dead', reason: 'interrupted', setting: 'max_retries_after_interruption',
                 quote: 'Such a job will be put to interrupted queue.', doc: README }],
    recovery_rules: [{
      state: 'running', after_s: RECOVERY_S,
      rule: "a job in the working queue of a process whose #{S::HEARTBEAT_LIFESPAN_S} s heartbeat expired is pushed " \
            "back to its queue by the next cleanup (at most every #{S::CLEANUP_INTERVAL_S} s, run by a fetcher " \
            "that is idle #{IDLE_S} s at a time)",
      quote: 'Detect "old" jobs and requeue them because the worker they were assigned to probably failed miserably.',
      doc: CODE
    }]
  }
end

# The jobs in the working queues of the run's queue, held by the process whose identity ends the key, until its
# heartbeat expires and the next cleanup can run; and the jobs the gem put in its interrupted set.
def held
  require 'sidekiq-reliable-fetch'
  found = {}
  now = Time.now.to_f
  Sidekiq.redis do |conn|
    conn.scan_each(match: "working:queue:#{SidekiqRunner.queue_name}:*").to_a.each do |key|
      identity = key.delete_prefix("working:queue:#{SidekiqRunner.queue_name}:")
      ttl = conn.ttl(Sidekiq::BaseReliableFetch.heartbeat_key(identity))
      until_s = now + [ttl, 0].max + S::CLEANUP_INTERVAL_S + IDLE_S
      conn.lrange(key, 0, -1).each do |raw|
        item = JSON.parse(raw)
        found[item['jid']] = [:held, item, { state: 'running', library_state: key, held_by: identity, until: until_s }]
      end
    end
  end
  Sidekiq::InterruptedSet.new.each do |entry|
    reason = "interrupted #{entry.item['interrupted_count']} times"
    found[entry.jid] = [:held, entry.item, { state: 'dead', library_state: 'interrupted', reason: reason }]
  end
  found
end

SidekiqRunner.serve(method(:describe), held: method(:held))
