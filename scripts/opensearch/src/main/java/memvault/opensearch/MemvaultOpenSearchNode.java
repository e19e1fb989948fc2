package memvault.opensearch;

import static org.codelibs.opensearch.runner.OpenSearchRunner.newConfigs;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

import org.codelibs.opensearch.runner.OpenSearchRunner;
import org.opensearch.cluster.health.ClusterHealthStatus;
import org.opensearch.core.common.transport.TransportAddress;
import org.opensearch.http.HttpServerTransport;

/**
 * Test-only, single-node, embedded OpenSearch 2.19 for memvault.
 *
 * <p>Usage: {@code java -cp ... memvault.opensearch.MemvaultOpenSearchNode [--base-path DIR]
 * [--port N] [--cluster-name NAME] [--stdin-watch]}
 *
 * <ul>
 *   <li>port: {@code --port}, else env {@code OPENSEARCH_PORT}, else 9200; bound on 127.0.0.1 only.
 *   <li>base path (config/, data/, logs/ of node_1 live under it): {@code --base-path}, else env
 *       {@code OPENSEARCH_DATA}, else a fresh temp dir.
 *   <li>{@code --stdin-watch}: exit when standard input reaches EOF (for a parent that spawns this
 *       process with a pipe). Off by default, since a background process usually has /dev/null as
 *       stdin.
 *   <li>JVM properties {@code -Dmemvault.opensearch.setting.KEY=VALUE} become node settings.
 * </ul>
 *
 * <p>Prints {@code READY http://127.0.0.1:PORT status=yellow|green} on stdout once the cluster is
 * at least yellow. SIGTERM (or stdin EOF with --stdin-watch) closes the node cleanly.
 */
public final class MemvaultOpenSearchNode {
  private static final String SETTING_PREFIX = "memvault.opensearch.setting.";
  private static final String KNN_PLUGIN = "org.opensearch.knn.plugin.KNNPlugin";

  static {
    // Same as OpenSearch's own jvm.options: our shutdown hook still needs logging.
    System.setProperty("log4j.shutdownHookEnabled", "false");
    System.setProperty("log4j2.disable.jmx", "true");
  }

  private MemvaultOpenSearchNode() {}

  public static void main(String[] args) throws Exception {
    Integer port = null;
    String basePath = null;
    String clusterName = "memvault-test";
    boolean stdinWatch = false;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--port":
          port = Integer.parseInt(args[++i]);
          break;
        case "--base-path":
          basePath = args[++i];
          break;
        case "--cluster-name":
          clusterName = args[++i];
          break;
        case "--stdin-watch":
          stdinWatch = true;
          break;
        default:
          System.err.println("unknown argument: " + args[i]);
          System.exit(2);
      }
    }
    if (port == null) {
      String env = System.getenv("OPENSEARCH_PORT");
      port = env == null || env.isBlank() ? 9200 : Integer.parseInt(env.trim());
    }
    if (basePath == null) {
      String env = System.getenv("OPENSEARCH_DATA");
      basePath =
          env == null || env.isBlank()
              ? Files.createTempDirectory("memvault-opensearch-").toString()
              : env.trim();
    }
    Path base = Paths.get(basePath).toAbsolutePath();
    Files.createDirectories(base);
    final int httpPort = port;
    final String transportPort = System.getenv("OPENSEARCH_TRANSPORT_PORT");

    final OpenSearchRunner runner = new OpenSearchRunner();
    // Never probe/rewrite the HTTP port: we set http.port explicitly below.
    runner.setMaxHttpPort(-1);

    final CountDownLatch closed = new CountDownLatch(1);
    final AtomicBoolean closing = new AtomicBoolean(false);
    Runnable shutdown =
        () -> {
          if (!closing.compareAndSet(false, true)) {
            return;
          }
          System.out.println("SHUTDOWN closing node");
          System.out.flush();
          try {
            if (!runner.isClosed()) {
              runner.close();
            }
          } catch (IOException | RuntimeException e) {
            e.printStackTrace();
          } finally {
            System.out.println("SHUTDOWN done");
            System.out.flush();
            closed.countDown();
          }
        };
    Runtime.getRuntime().addShutdownHook(new Thread(shutdown, "memvault-opensearch-shutdown"));

    try {
      runner.onBuild(
          (number, settings) -> {
            settings.put("http.port", String.valueOf(httpPort));
            settings.put("network.host", "127.0.0.1");
            settings.put("discovery.type", "single-node");
            // Test nodes run on shared CI disks: never go read-only because of free space.
            settings.put("cluster.routing.allocation.disk.threshold_enabled", false);
            if (transportPort != null && !transportPort.isBlank()) {
              settings.put("transport.port", transportPort.trim());
            }
            for (Map.Entry<Object, Object> e : System.getProperties().entrySet()) {
              String key = String.valueOf(e.getKey());
              if (key.startsWith(SETTING_PREFIX)) {
                settings.put(key.substring(SETTING_PREFIX.length()), String.valueOf(e.getValue()));
              }
            }
          });
      runner.build(
          newConfigs()
              .numOfNode(1)
              .basePath(base.toString())
              .clusterName(clusterName)
              .baseHttpPort(httpPort - 1)
              // The k-NN plugin as a classpath plugin (its jars: target/plugins/opensearch-knn,
              // put on the classpath by start.sh). A missing class fails the start.
              .pluginTypes(KNN_PLUGIN));
      ClusterHealthStatus status = runner.ensureYellow();
      TransportAddress bound =
          runner.getInstance(HttpServerTransport.class).boundAddress().publishAddress();
      System.out.println(
          "READY http://127.0.0.1:"
              + bound.getPort()
              + " status="
              + status.name().toLowerCase()
              + " base="
              + base);
      System.out.flush();
    } catch (Throwable t) {
      System.err.println("FAILED to start OpenSearch: " + t);
      t.printStackTrace();
      System.exit(1);
    }

    if (stdinWatch) {
      Thread watcher =
          new Thread(
              () -> {
                try {
                  InputStream in = System.in;
                  byte[] buf = new byte[256];
                  while (in.read(buf) >= 0) {
                    // ignore input; only EOF matters
                  }
                } catch (IOException ignored) {
                  // treat as EOF
                }
                System.out.println("SHUTDOWN stdin closed");
                System.exit(0);
              },
              "memvault-opensearch-stdin");
      watcher.setDaemon(true);
      watcher.start();
    }
    closed.await();
  }
}
