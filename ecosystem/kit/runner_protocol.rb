# frozen_string_literal: true

# The runner protocol's side of every Ruby runner (docs/runtime-faults.md), as runner_protocol.js is the Node
# runners': the ledger's records, the jobs file, the handler's run around a real sleep, and the four subcommands
# (inspect: protocol 2). A runner (ecosystem/<library>/runner/runner.rb) keeps what differs between libraries (its
# description, its client's enqueue, its worker) and hands them to RunnerProtocol.serve, so a fix to the protocol's
# side reaches every Ruby runner at once. It needs nothing but Ruby's standard library: the gems are the runner's.
require 'json'

module RunnerProtocol
  USAGE = 'describe, enqueue JOBS_FILE, worker or inspect JOBS_FILE'

  # The error a job told to fail raises: the library's ordinary failure of a job (an exception out of its handler).
  class JobFailed < StandardError; end

  module_function

  # One ledger record: start, end (with ok), ack (with accepted) or cancelled (with by and reason: the library or its
  # worker cancelled the run, written instead of end); one write of one line in append mode, so the records of the
  # processes and threads of one worker interleave whole.
  def record(event, job, attempt, ok: nil, accepted: nil, by: nil, reason: nil)
    line = {
      ev: event, job: job, worker: ENV.fetch('ALKSTORE_FAULTS_WORKER', nil), pid: Process.pid, attempt: attempt,
      mono: Process.clock_gettime(Process::CLOCK_MONOTONIC), # the clock of every other ledger and the fault log
      wall: Time.now.to_f
    }
    line[:ok] = ok if event == 'end'
    line[:accepted] = accepted if event == 'ack'
    line.update(by: by, reason: reason) if event == 'cancelled'
    File.open(ENV.fetch('ALKSTORE_FAULTS_LEDGER'), 'a') { |ledger| ledger.syswrite("#{JSON.generate(line)}\n") }
  end

  # A job's handler: start, a real sleep of its duration (a killed or paused process stops in it), end; then the
  # library's ordinary failure (JobFailed) when the job was told to fail.
  def perform(id, duration_s, fail, attempt)
    record('start', id, attempt)
    sleep(duration_s)
    record('end', id, attempt, ok: !fail)
    raise JobFailed, "job #{id} was told to fail" if fail

    id
  end

  # The jobs of an enqueue or inspect call: one JSON object a line (id, duration_s, fail).
  def read_jobs(path)
    File.readlines(path, chomp: true).reject { |line| line.strip.empty? }.map { |line| JSON.parse(line) }
  end

  # The one line for a library that is not installed (a require of it raised LoadError), or nil for any other error:
  # a runner without its library fails at describe naming what to install, not with a backtrace at every fault.
  # packages maps a require path's first part to the Debian package that installs it.
  def missing_package(error, packages)
    return nil unless error.is_a?(LoadError) && error.path && !error.path.start_with?('.', '/')

    name = error.path.split('/').first
    install = packages.fetch(name, "ruby-#{name.tr('_', '-')}")
    "runner needs the Ruby package '#{name}', which is not installed: install it (apt-get install -y #{install})"
  end

  # Runs the subcommand in argv and returns the exit status (exit(RunnerProtocol.serve(...))): describe prints the
  # describe block's object as one line of JSON; enqueue JOBS_FILE calls enqueue with the jobs; worker calls worker,
  # which starts one worker in the foreground until SIGTERM (or replaces the process with the library's own
  # command); inspect JOBS_FILE (protocol 2) calls inspect with the jobs and prints each state it returns as one line
  # of JSON. An error of any ends with status 1 and the error on stderr, its last line naming it (the only line,
  # naming the package, when a library is not installed); anything else, and inspect of a runner that gave none, is refused with status 2 and the usage.
  def serve(describe:, enqueue:, worker:, inspect: nil, argv: ARGV, packages: {})
    command, argument = argv
    what = command
    case [command, argv.length]
    when ['describe', 1] then $stdout.write("#{JSON.generate(describe.call)}\n")
    when ['enqueue', 2] then enqueue.call(read_jobs(argument))
    when ['worker', 1] then worker.call
    when ['inspect', 2]
      return refuse(argv, ' (this runner has no inspect: protocol 1)') unless inspect

      $stdout.write(inspect.call(read_jobs(argument)).map { |state| "#{JSON.generate(state)}\n" }.join)
    else
      return refuse(argv, command == 'inspect' ? ' (this runner has no inspect: protocol 1)' : '')
    end
    0
  rescue StandardError, LoadError => e
    line = missing_package(e, packages)
    # The backtrace first, the one line last: the harness reports a failed inspect by its stderr's last line.
    $stderr.write(line ? "#{line}\n" : "#{e.backtrace&.join("\n")}\n#{what} failed: #{e.class}: #{e.message}\n")
    1
  end

  def refuse(argv, missing)
    $stderr.write("unknown command #{JSON.generate(argv.join(' '))}#{missing}: #{USAGE}\n")
    2
  end
end
