// Runs Silicon on one program several times in one JVM and prints each run's wall time: the
// first run is cold (class loading, JIT), the later ones are Silicon as a long-running
// server or IDE uses it ("warm"). Compiled and run by bench/nagini against the silicon.jar
// of PyPI's nagini wheel. Arguments: RUNS, then Silicon's own command line.
import java.util.Arrays;

public class WarmSilicon {
    public static void main(String[] args) {
        int runs = Integer.parseInt(args[0]);
        java.util.List<String> siliconArgs = Arrays.asList(Arrays.copyOfRange(args, 1, args.length));
        scala.collection.immutable.Seq<String> command =
            scala.jdk.javaapi.CollectionConverters.asScala(siliconArgs).toList();
        for (int run = 0; run < runs; run++) {
            viper.silicon.SiliconFrontend frontend = new viper.silicon.SiliconRunnerInstance();
            long started = System.nanoTime();
            frontend.execute(command, frontend.execute$default$2());
            long elapsedMs = (System.nanoTime() - started) / 1_000_000;
            System.out.println("WARM_SILICON_RUN_MS " + elapsedMs);
            System.out.flush();
            if (frontend.verifier() != null) {
                frontend.verifier().stop();
            }
        }
        System.exit(0);
    }
}
