import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/**
 * DynamoDB Local bound to 127.0.0.1 only. Its own command line has no bind address, and its Jetty
 * connector listens on every interface: the table of every tenant would answer on the machine's LAN
 * address. This builds the server from DynamoDB Local's own arguments and sets the connector's host
 * before it starts. Run in Java's source-file mode (no build step): `java -cp <DynamoDBLocal.jar and
 * its lib> LoopbackDynamoDbLocal.java -port N …`.
 */
public class LoopbackDynamoDbLocal {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server jetty = (Server) field.get(proxy);
    for (Connector connector : jetty.getConnectors()) ((ServerConnector) connector).setHost("127.0.0.1");
    proxy.start();
  }
}
