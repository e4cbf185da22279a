/**
 * A broken copy of the Quartz runner (ecosystem/quartz/runner/): its jobs do not request recovery, so a killed
 * instance's job in progress is cleaned up by the next check-in of another instance, not re-executed, and Quartz
 * keeps no record of it. Its description is the runner's own, promise of no lost job included: the checker must
 * find the lost job and the broken promise (tests/test_faults_java_runners.py).
 */
public class QuartzNoRecovery extends QuartzLibrary {
    @Override
    protected boolean requestsRecovery() {
        return false;
    }

    public static void main(String[] args) {
        RunnerProtocol.serveAndExit("QuartzNoRecovery", args, QuartzRunner.PACKAGES);
    }
}
