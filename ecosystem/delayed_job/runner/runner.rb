# frozen_string_literal: true

# The delayed_job runner (docs/runtime-faults.md): describe, enqueue JOBS_FILE, worker, inspect JOBS_FILE, with
# delayed_job_active_record on the run's throwaway Postgres. enqueue creates the delayed_jobs table with the gem's own
# migration (its generator's template, rendered as `rails generate delayed_job:active_record` would), then
# Delayed::Job.enqueue's each job, keeping the map from the harness's ids to delayed_job's in ALKSTORE_FAULTS_STATE.
# The worker is `rake jobs:work` (Rakefile). A worker locks a job by setting locked_at and locked_by; another worker
# takes a job whose locked_at is older than max_run_time, and the worker running it times it out after max_run_time
# (Delayed::WorkerTimeout), then reschedules it 5 + N ** 4 seconds later. lease_s is max_run_time. inspect reads
# each job's row of the delayed_jobs table the README describes (a job that succeeded is deleted from it).
require 'erb'
require 'json'
require_relative '../../kit/runner_protocol'

README = '/usr/share/doc/ruby-delayed-job/README.md.gz (Debian ruby-delayed-job 4.1.9-1.1)'
PACKAGES = { 'active_record' => 'ruby-activerecord', 'delayed_job' => 'ruby-delayed-job',
             'delayed_job_active_record' => 'ruby-delayed-job-active-record', 'pg' => 'ruby-pg' }.freeze
MAX_RUN_TIME = 'The default Worker.max_run_time is 4.hours. If your job takes longer than that, another computer ' \
               'could pick it up.'
LOCK_EXPIRES = 'Otherwise the lock on the job would expire and another worker would start the working on the in ' \
               'progress job.'
RESCHEDULE = 'On error, the job is scheduled again in 5 seconds + N ** 4, where N is the number of attempts or ' \
             "using the job's defined reschedule_at method."

def ids_path
  File.join(ENV.fetch('ALKSTORE_FAULTS_STATE'), 'delayed_job_ids.json')
end

def describe
  require 'delayed_job'
  settings = [
    ['Delayed::Worker.max_run_time', 5], ['Delayed::Worker.sleep_delay', 1],
    ['Delayed::Worker.destroy_failed_jobs', false], ['Delayed::Worker.raise_signal_exceptions', ':term'],
    ['Delayed::Worker.max_attempts', '25 (the default)'], ['rake jobs:work with QUEUE', 'the run\'s queue']
  ].map { |name, value| { name: name, value: value, doc: README } }
  {
    library: 'delayed_job', version: "#{Gem::Specification.find_by_name('delayed_job').version} + " \
                                     "delayed_job_active_record #{Gem::Specification.find_by_name('delayed_job_active_record').version}",
    settings: settings,
    lease_s: 5.0,
    recovery_window_s: 20.0,
    faults: %w[kill9 startup pause broker_restart net_cut slow_handler],
    promises: [],
    caveats: [
      { outcome: 'concurrent', faults: %w[pause slow_handler], quote: LOCK_EXPIRES, doc: README },
      { outcome: 'twice', faults: %w[pause slow_handler], quote: MAX_RUN_TIME, doc: README }
    ],
    inspect_doc: README,
    policies: [],
    recovery_rules: [
      { state: 'running', after_s: 5 + 1,
        rule: 'a job locked longer than max_run_time (5 s) is taken by the next worker that looks (every sleep_delay, 1 s)',
        quote: MAX_RUN_TIME, doc: README },
      { state: 'scheduled', after_s: nil, rule: 'a job that failed or timed out runs again at its run_at',
        quote: RESCHEDULE, doc: README }
    ]
  }
end

# The gem's migration, from its generator's template, run on the run's database.
def create_delayed_jobs_table
  template = Gem::Specification.find_by_name('delayed_job_active_record').gem_dir +
             '/lib/generators/delayed_job/templates/migration.rb'
  version = "[#{ActiveRecord::VERSION::MAJOR}.#{ActiveRecord::VERSION::MINOR}]"
  eval(ERB.new(File.read(template)).result_with_hash(migration_version: version)) # rubocop:disable Security/Eval
  CreateDelayedJobs.migrate(:up)
end

def enqueue(jobs)
  require_relative 'setup'
  ActiveRecord::Migration.verbose = false
  create_delayed_jobs_table unless ActiveRecord::Base.connection.table_exists?(:delayed_jobs)
  queue = ENV.fetch('ALKSTORE_FAULTS_QUEUE')
  ids = jobs.to_h do |job|
    [job['id'], Delayed::Job.enqueue(AlkstoreJob.new(job['id'], job['duration_s'], job['fail']), queue: queue).id]
  end
  File.write(ids_path, JSON.generate(ids))
end

def state_of(row, now)
  return { state: 'absent', library_state: 'no row', attempts: nil } unless row

  state = { library_state: 'delayed_jobs row', attempts: row.attempts + (row.locked_at ? 1 : 0) }
  if row.failed_at
    state.update(state: 'failed', library_state: 'failed_at set', reason: row.last_error.to_s.lines.first&.strip)
  elsif row.locked_at
    state.update(state: 'running', library_state: 'locked', held_by: row.locked_by,
                 until: row.locked_at.to_f + Delayed::Worker.max_run_time)
  elsif row.run_at.to_f > now
    state.update(state: 'scheduled', library_state: 'run_at ahead', until: row.run_at.to_f,
                 reason: row.last_error.to_s.lines.first&.strip)
  else
    state.update(state: 'queued', library_state: 'ready')
  end
end

def inspect_jobs(jobs)
  require_relative 'setup'
  ids = JSON.parse(File.read(ids_path))
  now = Time.now.to_f
  jobs.map do |job|
    row = Delayed::Job.find_by(id: ids.fetch(job['id']))
    { job: job['id'], state: nil, library_state: nil, reason: nil, until: nil, held_by: nil,
      attempts: nil }.update(state_of(row, now))
  end
end

def worker
  ENV['QUEUE'] = ENV.fetch('ALKSTORE_FAULTS_QUEUE')
  exec('rake', 'jobs:work')
end

exit(RunnerProtocol.serve(describe: method(:describe), enqueue: method(:enqueue), worker: method(:worker),
                          inspect: method(:inspect_jobs), packages: PACKAGES))
