import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.kafka.admin.AdminUtils;
import org.apache.kafka.admin.BrokerMetadata;
import org.apache.kafka.common.utils.Utils;

/**
 * Kafka's own placement rules, asked by the tests one request a line on stdin, answered one line
 * each on stdout:
 *   murmur2 HEXKEY PARTITIONS                      -> HASH PARTITION (the Java producer's)
 *   assign FIXEDSTART STARTID PARTITIONS RF ID[:RACK],...
 *                                                  -> P=B,B;P=B,B;... (AdminUtils)
 * An exception is answered as "ERROR SimpleClassName: message".
 */
public class KafkaRules {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        PrintWriter out = new PrintWriter(System.out);
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.split(" ", -1);
            try {
                out.println(f[0].equals("murmur2") ? murmur2(f) : assign(f));
            } catch (RuntimeException e) {
                out.println("ERROR " + e.getClass().getSimpleName() + ": " + e.getMessage());
            }
        }
        out.flush();
    }

    static String murmur2(String[] f) {
        byte[] key = new byte[f[1].length() / 2];
        for (int i = 0; i < key.length; i++) {
            key[i] = (byte) Integer.parseInt(f[1].substring(2 * i, 2 * i + 2), 16);
        }
        int hash = Utils.murmur2(key);
        return hash + " " + Utils.toPositive(hash) % Integer.parseInt(f[2]);
    }

    static String assign(String[] f) {
        List<BrokerMetadata> brokers = new ArrayList<>();
        for (String b : f[5].split(",")) {
            String[] idRack = b.split(":");
            Optional<String> rack = idRack.length > 1 ? Optional.of(idRack[1]) : Optional.empty();
            brokers.add(new BrokerMetadata(Integer.parseInt(idRack[0]), rack));
        }
        Map<Integer, List<Integer>> placed = AdminUtils.assignReplicasToBrokers(
            brokers, Integer.parseInt(f[3]), Integer.parseInt(f[4]), Integer.parseInt(f[1]),
            Integer.parseInt(f[2]));
        StringBuilder answer = new StringBuilder();
        for (Map.Entry<Integer, List<Integer>> e : new TreeMap<>(placed).entrySet()) {
            answer.append(e.getKey()).append('=');
            List<String> replicas = new ArrayList<>();
            for (int r : e.getValue()) {
                replicas.add(Integer.toString(r));
            }
            answer.append(String.join(",", replicas)).append(';');
        }
        return answer.toString();
    }
}
