# frozen_string_literal: true

# What the two Sidekiq runners share (runner.rb, ../runner_reliable_fetch/runner.rb): the client's enqueue, the
# worker (Sidekiq's own `sidekiq` command, exec'd, so the harness's signals reach Sidekiq itself) and inspect, which
# reads each job where Sidekiq's API (sidekiq/api: Sidekiq::Queue, RetrySet, ScheduledSet, DeadSet, WorkSet) or, for
# the reliable fetch, the gem's working queues and interrupted set hold it. Sidekiq keeps no record of a job that
# completed: such a job reads `absent`, and the checker reads the state only of jobs no run completed.
require 'json'
require_relative '../../kit/runner_protocol'

module SidekiqRunner
  WIKI = 'https://github.com/sidekiq/sidekiq/wiki'
  CONCURRENCY = 1
  JOB_CLASS = 'AlkstoreJob'
  PACKAGES = { 'sidekiq' => 'ruby-sidekiq', 'sidekiq-reliable-fetch' => 'ruby-gitlab-sidekiq-fetcher' }.freeze
  # The settings both runners set, each with the page that documents it.
  SETTINGS = [
    { name: 'sidekiq -e', value: 'production', doc: "#{WIKI}/Deployment" },
    { name: 'sidekiq -c (concurrency)', value: CONCURRENCY, doc: "#{WIKI}/Advanced-Options" },
    { name: 'sidekiq -q (queue)', value: 'the run\'s queue', doc: "#{WIKI}/Advanced-Options" },
    { name: 'REDIS_URL', value: 'the run\'s throwaway Redis', doc: "#{WIKI}/Using-Redis" }
  ].freeze

  module_function

  def queue_name
    ENV.fetch('ALKSTORE_FAULTS_QUEUE')
  end

  def connect
    require 'sidekiq'
    require 'sidekiq/api'
    Sidekiq.redis = { url: ENV.fetch('ALKSTORE_FAULTS_BROKER') }
  end

  # Each job through Sidekiq's client, with the harness's id as Sidekiq's jid (the job id a caller may give).
  def enqueue(jobs)
    connect
    jobs.each do |job|
      Sidekiq::Client.push(
        'class' => JOB_CLASS, 'queue' => queue_name, 'jid' => job['id'],
        'args' => [job['id'], job['duration_s'], job['fail']]
      )
    end
  end

  # One Sidekiq process as its Deployment page runs it, replacing this one.
  def worker(tasks)
    ENV['REDIS_URL'] = ENV.fetch('ALKSTORE_FAULTS_BROKER')
    tag = "#{queue_name}-#{ENV.fetch('ALKSTORE_FAULTS_WORKER')}"
    exec('sidekiq', '-e', 'production', '-r', tasks, '-q', queue_name, '-c', CONCURRENCY.to_s, '-g', tag)
  end

  # Serves the protocol (../../kit/runner_protocol.rb) for a runner of the given description; held (a callable)
  # gives the holds a fetch keeps beside Sidekiq's own API, read once Sidekiq is connected.
  def serve(describe, held: -> { {} })
    exit(RunnerProtocol.serve(
           describe: describe,
           enqueue: method(:enqueue),
           worker: -> { worker('./tasks.rb') },
           inspect: lambda { |jobs|
             connect
             states(jobs, held: held.call)
           },
           packages: PACKAGES
         ))
  end

  def attempts(item)
    item['retry_count'].nil? ? 1 : item['retry_count'] + 2
  end

  def blank(id)
    { job: id, state: 'absent', library_state: 'no record', reason: nil, until: nil, held_by: nil, attempts: nil }
  end

  # What Sidekiq's API holds of each job of the run: in its queue, its retry, scheduled or dead set, or in progress
  # in a process whose heartbeat (its key in Redis) still lives. `held` adds the reliable fetch's holds.
  def states(jobs, held: {})
    found = {}
    Sidekiq::Queue.new(queue_name).each { |record| found[record.jid] = [:queued, record.item, nil] }
    Sidekiq::ScheduledSet.new.each { |entry| found[entry.jid] = [:scheduled, entry.item, entry.at.to_f] }
    Sidekiq::RetrySet.new.each { |entry| found[entry.jid] = [:retry, entry.item, entry.at.to_f] }
    Sidekiq::DeadSet.new.each { |entry| found[entry.jid] = [:dead, entry.item, nil] }
    Sidekiq::WorkSet.new.each { |process, _thread, work| found[work['payload']['jid']] = [:busy, work['payload'], process] }
    found.update(held)
    jobs.map { |job| state_of(job['id'], *found.fetch(job['id'], [nil, nil, nil])) }
  end

  def state_of(id, where, item, extra)
    state = blank(id)
    return state if where.nil?

    state[:attempts] = attempts(item)
    case where
    when :queued then state.update(state: 'queued', library_state: "queue:#{queue_name}")
    when :scheduled then state.update(state: 'scheduled', library_state: 'schedule', until: extra)
    when :retry then state.update(state: 'scheduled', library_state: 'retry', until: extra, reason: item['error_class'])
    when :dead then state.update(state: 'dead', library_state: 'dead', reason: item['error_class'])
    when :busy # no documented rule runs it again: its process's heartbeat only says who held it
      state.update(state: 'running', library_state: 'busy (Sidekiq::WorkSet)', held_by: extra)
    else state.update(extra)
    end
  end
end
