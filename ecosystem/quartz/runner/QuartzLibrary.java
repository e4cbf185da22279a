import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.quartz.JobBuilder;
import org.quartz.JobDetail;
import org.quartz.JobKey;
import org.quartz.Scheduler;
import org.quartz.SchedulerException;
import org.quartz.SimpleScheduleBuilder;
import org.quartz.Trigger;
import org.quartz.TriggerBuilder;
import org.quartz.core.QuartzScheduler;
import org.quartz.impl.StdSchedulerFactory;

/**
 * The Quartz runner of alkstore's runtime-faults mode (docs/runtime-faults.md): Quartz 2.3.2 as Debian ships it,
 * clustered on the run's Postgres through its JDBC job store (JobStoreTX), each worker one scheduler instance in a
 * JVM of its own, every setting the one Quartz's configuration reference documents (SETTINGS, each with its doc).
 * A job is a JobDetail of LedgerJob that requests recovery, fired once by a SimpleTrigger starting now. The client
 * (enqueue) creates Quartz's tables from the DDL the jar itself ships (tables_postgres.sql) and stores the jobs
 * through an instance it never starts; inspect reads each job back through the Scheduler API (checkExists,
 * getTriggersOfJob, getTriggerState) and, for a job in progress, the QRTZ_FIRED_TRIGGERS and QRTZ_SCHEDULER_STATE
 * rows that DDL defines: the instance that holds it and its last check-in, from which another instance declares it
 * failed (JobStoreSupport.calcFailedIfAfter: the check-in interval plus 7.5 s).
 */
public class QuartzLibrary implements RunnerProtocol.Runner {
    static final String GROUP = "alkstore";
    static final long CHECKIN_MS = 1000;
    /** JobStoreSupport.calcFailedIfAfter's fixed slack past an instance's check-in interval (Quartz 2.3.2). */
    static final long FAILED_AFTER_SLACK_MS = 7500;
    static final String DDL = "org/quartz/impl/jdbcjobstore/tables_postgres.sql";

    static final String CONFIG = "https://github.com/quartz-scheduler/quartz/blob/"
            + "3ce74c701a04203d613670a41409ce4874a39281/docs/configuration.adoc";
    static final String CLUSTERING =
            "https://quartz-scheduler.org/documentation/quartz-2.3.0/configuration/ConfigJDBCJobStoreClustering.html";
    static final String LESSON3 = "https://github.com/quartz-scheduler/quartz/blob/"
            + "01befdb196f61333a2bc58dc813fe215765b01ad/docs/tutorials/tutorial-lesson-03.md";
    static final String LESSON4 = "https://github.com/quartz-scheduler/quartz/blob/"
            + "01befdb196f61333a2bc58dc813fe215765b01ad/docs/tutorials/tutorial-lesson-04.md";
    static final String JOB_STORE_SUPPORT = "https://github.com/quartz-scheduler/quartz/blob/"
            + "aa62cf3c5d0f1f62b9ea2747b3d13ad5ff3d0c01/quartz-core/src/main/java/org/quartz/impl/jdbcjobstore/"
            + "JobStoreSupport.java";
    static final String TABLES = "/usr/share/java/quartz2.jar!/" + DDL + " (Debian libquartz2-java 2.3.2)";

    static final String FAILOVER = "Fail-over occurs when one of the nodes fails while in the midst of executing "
            + "one or more jobs. When a node fails, the other nodes detect the condition and identify the jobs in the "
            + "database that were in progress within the failed node. Any jobs marked for recovery (with the "
            + "\u201crequests recovery\u201d property on the JobDetail) will be re-executed by the remaining nodes.";
    static final String ONE_NODE = "Only one node will fire the job for each firing.";
    static final String FAILED_IF_AFTER = "return rec.getCheckinTimestamp() + Math.max(rec.getCheckinInterval(), "
            + "(System.currentTimeMillis() - lastCheckin)) + 7500L;";

    /**
     * Every Quartz property the runner sets (the data source's URL and user come from ALKSTORE_FAULTS_BROKER): name,
     * value, and the page that documents it. The same table makes the properties and describe's settings.
     */
    static final String[][] SETTINGS = {
        {"org.quartz.scheduler.instanceId", "AUTO", CONFIG + "#org.quartz.scheduler.instanceId (clustering: "
                + "\"Each node in the cluster MUST have a unique instanceId\")"},
        {"org.quartz.scheduler.skipUpdateCheck", "true", CONFIG + "#org.quartz.scheduler.skipUpdateCheck "
                + "(\"It is recommended that you disable the update check for production deployments.\")"},
        {"org.quartz.scheduler.idleWaitTime", "5000", CONFIG + "#org.quartz.scheduler.idleWaitTime (the least it "
                + "recommends: \"Values less than 5000 ms are not recommended\")"},
        {"org.quartz.scheduler.dbFailureRetryInterval", "1000", CONFIG
                + "#org.quartz.scheduler.dbFailureRetryInterval (default 15000: shortened so a run lasts minutes)"},
        {"org.quartz.threadPool.class", "org.quartz.simpl.SimpleThreadPool", CONFIG + "#org.quartz.threadPool.class"},
        {"org.quartz.threadPool.threadCount", "1", CONFIG + "#org.quartz.threadPool.threadCount (one job at a time "
                + "per worker, as the other runners run)"},
        {"org.quartz.jobStore.class", "org.quartz.impl.jdbcjobstore.JobStoreTX", CLUSTERING},
        {"org.quartz.jobStore.driverDelegateClass", "org.quartz.impl.jdbcjobstore.PostgreSQLDelegate", CONFIG
                + "#org.quartz.jobStore.driverDelegateClass; " + TABLES},
        {"org.quartz.jobStore.dataSource", "alkstore", CONFIG + "#org.quartz.jobStore.dataSource"},
        {"org.quartz.jobStore.tablePrefix", "QRTZ_", CONFIG + "#org.quartz.jobStore.tablePrefix; " + TABLES},
        {"org.quartz.jobStore.useProperties", "true", CONFIG + "#org.quartz.jobStore.useProperties"},
        {"org.quartz.jobStore.misfireThreshold", "60000", CONFIG + "#org.quartz.jobStore.misfireThreshold "
                + "(its default and the clustering example's)"},
        {"org.quartz.jobStore.isClustered", "true", CLUSTERING},
        {"org.quartz.jobStore.clusterCheckinInterval", String.valueOf(CHECKIN_MS), CONFIG
                + "#org.quartz.jobStore.clusterCheckinInterval (default 15000, the clustering example's 20000: "
                + "shortened so a fail-over fits in a run)"},
        {"org.quartz.dataSource.alkstore.driver", "org.postgresql.Driver", CONFIG + "#org.quartz.dataSource.NAME.driver"},
        {"org.quartz.dataSource.alkstore.maxConnections", "4", CONFIG + "#org.quartz.dataSource.NAME.maxConnections "
                + "(\"at least the number of worker threads in the thread pool plus three\")"},
        {"org.quartz.dataSource.alkstore.validationQuery", "select 1", CONFIG
                + "#org.quartz.dataSource.NAME.validationQuery"},
        {"org.quartz.dataSource.alkstore.validateOnCheckout", "true", CONFIG
                + "#org.quartz.dataSource.NAME.validateOnCheckout"},
    };

    @Override
    public Map<String, Object> describe() {
        List<Object> settings = new ArrayList<>();
        for (String[] setting : SETTINGS) {
            settings.add(Map.of("name", setting[0], "value", setting[1], "doc", setting[2]));
        }
        settings.add(Map.of("name", "JobBuilder.requestRecovery(true)", "value", true, "doc", LESSON3));
        settings.add(Map.of("name", "SimpleScheduleBuilder.withMisfireHandlingInstructionFireNow()", "value", true,
                "doc", LESSON4));
        double failedAfterS = (CHECKIN_MS + FAILED_AFTER_SLACK_MS) / 1000.0;
        Map<String, Object> description = new LinkedHashMap<>();
        description.put("library", "quartz");
        description.put("version", "quartz " + QuartzScheduler.getVersionMajor() + "." + QuartzScheduler.getVersionMinor()
                + "." + QuartzScheduler.getVersionIteration() + ", pgjdbc " + org.postgresql.util.DriverInfo.DRIVER_VERSION);
        description.put("settings", settings);
        // An instance is failed clusterCheckinInterval + 7.5 s after its last check-in, seen at the next check-in of
        // another (one interval more).
        description.put("lease_s", failedAfterS + CHECKIN_MS / 1000.0);
        description.put("recovery_window_s", 25);
        description.put("faults", List.of("kill9", "startup", "pause", "broker_restart", "net_cut", "slow_handler"));
        description.put("promises", List.of(
                Map.of("outcome", "lost", "faults", List.of("kill9", "startup", "pause"), "max", 0,
                        "quote", FAILOVER, "doc", CLUSTERING),
                Map.of("outcome", "twice", "faults", List.of("broker_restart", "net_cut", "slow_handler"), "max", 0,
                        "quote", ONE_NODE, "doc", CLUSTERING)));
        description.put("caveats", List.of(
                Map.of("outcome", "twice", "faults", List.of("kill9", "startup", "pause"), "quote", FAILOVER,
                        "doc", CLUSTERING)));
        description.put("inspect_doc", "org.quartz.Scheduler checkExists, getTriggersOfJob, getTriggerState "
                + "(quartz 2.3.2); QRTZ_FIRED_TRIGGERS and QRTZ_SCHEDULER_STATE of " + TABLES);
        description.put("policies", List.of());
        description.put("recovery_rules", List.of(Map.of(
                "state", "running", "after_s", failedAfterS,
                "rule", "a job in progress on an instance that has not checked in for clusterCheckinInterval + 7.5 s "
                        + "is re-executed by the next instance to check in, since it requests recovery",
                "quote", FAILED_IF_AFTER, "doc", JOB_STORE_SUPPORT)));
        return description;
    }

    /** The JDBC URL and user of ALKSTORE_FAULTS_BROKER (postgresql://USER@HOST:PORT/DB). */
    static String[] jdbc() {
        URI broker = URI.create(System.getenv("ALKSTORE_FAULTS_BROKER"));
        String user = broker.getUserInfo() == null ? "postgres" : broker.getUserInfo().split(":", 2)[0];
        String url = "jdbc:postgresql://" + broker.getHost() + ":" + broker.getPort() + broker.getPath();
        return new String[] {url, user};
    }

    /** A scheduler instance of the run's cluster (its name: the run's queue), configured from SETTINGS. */
    static Scheduler scheduler() throws SchedulerException {
        Properties properties = new Properties();
        for (String[] setting : SETTINGS) {
            properties.setProperty(setting[0], setting[1]);
        }
        String[] jdbc = jdbc();
        properties.setProperty("org.quartz.scheduler.instanceName", System.getenv("ALKSTORE_FAULTS_QUEUE"));
        properties.setProperty("org.quartz.dataSource.alkstore.URL", jdbc[0]);
        properties.setProperty("org.quartz.dataSource.alkstore.user", jdbc[1]);
        properties.setProperty("org.quartz.dataSource.alkstore.password", "");
        return new StdSchedulerFactory(properties).getScheduler();
    }

    static Connection connect() throws SQLException {
        String[] jdbc = jdbc();
        return DriverManager.getConnection(jdbc[0], jdbc[1], "");
    }

    /** Quartz's tables, from the DDL its jar ships, unless a former enqueue of the database made them. */
    static void createTables() throws IOException, SQLException {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            try (ResultSet found = statement.executeQuery("select to_regclass('qrtz_job_details') is not null")) {
                found.next();
                if (found.getBoolean(1)) {
                    return;
                }
            }
            String ddl;
            try (InputStream in = QuartzScheduler.class.getClassLoader().getResourceAsStream(DDL)) {
                if (in == null) {
                    throw new IOException("the Quartz jar has no " + DDL);
                }
                ddl = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            StringBuilder code = new StringBuilder();
            for (String line : ddl.split("\n")) {
                if (!line.trim().startsWith("--")) {
                    code.append(line).append('\n');
                }
            }
            for (String sql : code.toString().split(";")) {
                if (!sql.isBlank() && !sql.trim().equalsIgnoreCase("commit")) {
                    statement.execute(sql);
                }
            }
        }
    }

    /**
     * Whether each job requests recovery: true, as fail-over needs; a broken copy of the runner
     * (tests/fault_runtimes/quartz_no_recovery) says false, and the checker must find the job it loses.
     */
    protected boolean requestsRecovery() {
        return true;
    }

    @Override
    public void enqueue(List<Map<String, Object>> jobs) throws Exception {
        createTables();
        Scheduler client = scheduler(); // never started: it stores jobs, it runs none
        try {
            for (Map<String, Object> job : jobs) {
                String id = (String) job.get("id");
                JobDetail detail = JobBuilder.newJob(LedgerJob.class)
                        .withIdentity(id, GROUP)
                        .requestRecovery(requestsRecovery())
                        .usingJobData("id", id)
                        .usingJobData("duration_s", String.valueOf(job.get("duration_s")))
                        .usingJobData("fail", String.valueOf(Boolean.TRUE.equals(job.get("fail"))))
                        .build();
                Trigger trigger = TriggerBuilder.newTrigger()
                        .withIdentity(id, GROUP)
                        .startNow()
                        .withSchedule(SimpleScheduleBuilder.simpleSchedule().withMisfireHandlingInstructionFireNow())
                        .build();
                client.scheduleJob(detail, trigger);
            }
        } finally {
            client.shutdown(false);
        }
    }

    @Override
    public void worker() throws Exception {
        Scheduler worker = scheduler();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                worker.shutdown(true); // SIGTERM: let the job in progress finish, as a graceful shutdown does
            } catch (SchedulerException error) {
                System.err.println("shutdown failed: " + error);
            }
        }));
        worker.start();
    }

    @Override
    public List<Map<String, Object>> inspect(List<Map<String, Object>> jobs) throws Exception {
        Scheduler reader = scheduler(); // never started: it reads, it recovers nothing
        try (Connection connection = connect()) {
            List<Map<String, Object>> states = new ArrayList<>();
            for (Map<String, Object> job : jobs) {
                states.add(stateOf(reader, connection, (String) job.get("id")));
            }
            return states;
        } finally {
            reader.shutdown(false);
        }
    }

    static Map<String, Object> state(String job, String state, String libraryState) {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("job", job);
        line.put("state", state);
        line.put("library_state", libraryState);
        line.put("reason", null);
        line.put("until", null);
        line.put("held_by", null);
        line.put("attempts", null);
        return line;
    }

    /** One job's state: absent (no JobDetail), running (a fired trigger of an instance), or its trigger's state. */
    static Map<String, Object> stateOf(Scheduler reader, Connection connection, String id)
            throws SchedulerException, SQLException {
        JobKey key = JobKey.jobKey(id, GROUP);
        if (!reader.checkExists(key)) {
            return state(id, "absent", "no JobDetail");
        }
        String sql = "select f.instance_name, f.state, s.last_checkin_time, s.checkin_interval "
                + "from qrtz_fired_triggers f left join qrtz_scheduler_state s "
                + "on s.sched_name = f.sched_name and s.instance_name = f.instance_name "
                + "where f.sched_name = ? and f.job_name = ? and f.job_group = ? order by f.fired_time";
        try (PreparedStatement query = connection.prepareStatement(sql)) {
            query.setString(1, reader.getSchedulerName());
            query.setString(2, id);
            query.setString(3, GROUP);
            try (ResultSet fired = query.executeQuery()) {
                if (fired.next()) {
                    String instance = fired.getString(1);
                    Map<String, Object> line = state(id, "running", "QRTZ_FIRED_TRIGGERS " + fired.getString(2));
                    line.put("held_by", instance);
                    long checkin = fired.getLong(3);
                    // Failed clusterCheckinInterval + 7.5 s after its last check-in; an instance with no row left is
                    // failed at once: the next check-in of any instance recovers its orphaned fired triggers.
                    long until = fired.wasNull() ? System.currentTimeMillis()
                            : checkin + fired.getLong(4) + FAILED_AFTER_SLACK_MS;
                    line.put("until", until / 1000.0);
                    return line;
                }
            }
        }
        List<? extends Trigger> triggers = reader.getTriggersOfJob(key);
        if (triggers.isEmpty()) {
            Map<String, Object> line = state(id, "unknown", "a JobDetail with no trigger");
            line.put("reason", "a non-durable JobDetail with no trigger and no fired trigger");
            return line;
        }
        Trigger trigger = triggers.get(0);
        Trigger.TriggerState triggerState = reader.getTriggerState(trigger.getKey());
        Map<String, Object> line = state(id, "unknown", "trigger " + trigger.getKey() + " " + triggerState);
        if (triggerState == Trigger.TriggerState.NORMAL && trigger.getNextFireTime() != null) {
            long next = trigger.getNextFireTime().getTime();
            line.put("state", next <= System.currentTimeMillis() ? "queued" : "scheduled");
            line.put("until", next <= System.currentTimeMillis() ? null : next / 1000.0);
        } else if (triggerState == Trigger.TriggerState.ERROR) {
            line.put("state", "failed");
            line.put("reason", "trigger in ERROR state");
        } else {
            line.put("reason", "trigger state " + triggerState + " has no protocol state");
        }
        return line;
    }
}
