import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;

/**
 * Prints the iteration order of keys (stdin, one per line, inserted in that order) in
 * java.util.HashMap (filled with computeIfAbsent) and in the scala.collection.mutable.HashMap of the Scala library on the
 * classpath: "java<TAB>k1<TAB>k2..." and "scala<TAB>k1<TAB>k2...". Groups are separated by empty lines.
 */
public final class MapOrder {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        List<String> keys = new ArrayList<>();
        String line;
        while ((line = in.readLine()) != null) {
            if (!line.isEmpty()) {
                keys.add(line);
                continue;
            }
            HashMap<String, Integer> java = new HashMap<>();
            scala.collection.mutable.HashMap<String, Integer> scalaMap = new scala.collection.mutable.HashMap<>();
            for (String key : keys) {
                java.computeIfAbsent(key, k -> 0);  // as DumpLogSegments.java fills its maps
                scalaMap.put(key, 0);
            }
            System.out.println("java\t" + String.join("\t", java.keySet()));
            StringBuilder order = new StringBuilder("scala");
            scala.collection.Iterator<String> it = scalaMap.keysIterator();
            while (it.hasNext()) {
                order.append('\t').append(it.next());
            }
            System.out.println(order);
            keys.clear();
        }
    }
}
