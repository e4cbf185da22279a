# frozen_string_literal: true

# delayed_job on Postgres through ActiveRecord, as the runner (runner.rb) and the worker (Rakefile) load it: the
# connection to the run's database, Delayed::Worker's settings (each in runner.rb's description, with the README's
# words for it) and the job. The job's hooks are delayed_job's documented ones: `before` gives the handler the
# attempt (delayed_job's attempts, the failures so far, + 1), `error` writes the `cancelled` record when
# max_run_time's timeout (Delayed::WorkerTimeout) ended the run.
require 'active_record'
require 'delayed_job'
require 'delayed_job_active_record'
require_relative '../../kit/runner_protocol'

module DelayedJobSettings
  MAX_RUN_TIME_S = 5
  SLEEP_DELAY_S = 1
  DESTROY_FAILED_JOBS = false
  RAISE_SIGNAL_EXCEPTIONS = :term
end

ActiveRecord::Base.establish_connection(ENV.fetch('ALKSTORE_FAULTS_BROKER'))
ActiveRecord::Base.logger = nil
Delayed::Worker.backend = :active_record
Delayed::Worker.max_run_time = DelayedJobSettings::MAX_RUN_TIME_S
Delayed::Worker.sleep_delay = DelayedJobSettings::SLEEP_DELAY_S
Delayed::Worker.destroy_failed_jobs = DelayedJobSettings::DESTROY_FAILED_JOBS
Delayed::Worker.raise_signal_exceptions = DelayedJobSettings::RAISE_SIGNAL_EXCEPTIONS

# The harness's job: a custom job (a Struct with perform), as the README's "Custom Jobs" writes one.
AlkstoreJob = Struct.new(:id, :duration_s, :fail) do
  def before(job)
    @attempt = job.attempts + 1
  end

  def perform
    RunnerProtocol.perform(id, duration_s, fail, @attempt)
  end

  def error(job, exception)
    return unless exception.is_a?(Delayed::WorkerTimeout)

    RunnerProtocol.record('cancelled', id, job.attempts + 1, by: 'library', reason: 'max_run_time')
  end
end
