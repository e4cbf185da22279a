import org.quartz.Job;
import org.quartz.JobDataMap;
import org.quartz.JobExecutionContext;
import org.quartz.JobExecutionException;

/**
 * The runner's Quartz job: the protocol's handler (RunnerProtocol.perform) on the job's data, which the client
 * stored as strings (org.quartz.jobStore.useProperties). A job told to fail throws JobExecutionException, the one
 * exception Quartz lets a job's execute() throw (tutorial lesson 3). Quartz counts no attempts across a fail-over
 * (JobExecutionContext.getRefireCount() counts only refireImmediately), so the ledger's attempt is null.
 */
public class LedgerJob implements Job {
    @Override
    public void execute(JobExecutionContext context) throws JobExecutionException {
        JobDataMap data = context.getMergedJobDataMap();
        String id = data.getString("id");
        try {
            RunnerProtocol.perform(
                    id, Double.parseDouble(data.getString("duration_s")), Boolean.parseBoolean(data.getString("fail")),
                    null);
        } catch (RunnerProtocol.JobFailed failed) {
            throw new JobExecutionException(failed.getMessage(), failed, false);
        } catch (Exception error) {
            throw new JobExecutionException(error, false);
        }
    }
}
