package dev.redeye.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * What a new user meets first: the BOM lists every published module of the build at the build's version (and
 * imports no third-party versions), the root README's quick start imports the BOM, and every module README
 * shows a dependency snippet for its artifact and the imports of its Java code.
 */
class PackagingTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    /** Modules being added by parallel work; the BOM lists them ahead of their landing. */
    private static final Set<String> ANNOUNCED = Set.of("redeye-store-dynamodb", "redeye-store-hazelcast");

    private static Document pom(Path p) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(false);
        return f.newDocumentBuilder().parse(p.toFile());
    }

    private static String child(Element e, String tag) {
        for (Node n = e.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element c && c.getTagName().equals(tag)) {
                return c.getTextContent().trim();
            }
        }
        return null;
    }

    private static List<String> modules() throws Exception {
        NodeList list = pom(ROOT.resolve("pom.xml")).getElementsByTagName("module");
        List<String> out = new ArrayList<>();
        for (int i = 0; i < list.getLength(); i++) {
            out.add(list.item(i).getTextContent().trim());
        }
        return out;
    }

    /** A module is published unless it is a pom-only aggregate or says maven.deploy.skip. */
    private static boolean published(Document d) {
        Element project = d.getDocumentElement();
        NodeList skip = d.getElementsByTagName("maven.deploy.skip");
        boolean skipped = skip.getLength() > 0 && skip.item(0).getTextContent().trim().equals("true");
        return !skipped && !"pom".equals(child(project, "packaging"));
    }

    @Test
    void theBomListsEveryPublishedModuleAtTheBuildsVersion() throws Exception {
        Set<String> published = new TreeSet<>();
        for (String m : modules()) {
            Document d = pom(ROOT.resolve(m).resolve("pom.xml"));
            if (published(d)) {
                published.add(child(d.getDocumentElement(), "artifactId"));
            }
        }
        assertTrue(published.containsAll(Set.of("redeye-api", "redeye-engine", "redeye-micrometer")), published.toString());
        assertTrue(!published.contains("redeye-examples") && !published.contains("redeye-bench"), published.toString());

        Document bom = pom(ROOT.resolve("redeye-bom/pom.xml"));
        Element project = bom.getDocumentElement();
        assertEquals(0, bom.getElementsByTagName("parent").getLength(),
                "no parent: the BOM must not import the build's third-party versions");
        assertEquals("pom", child(project, "packaging"));
        String rootVersion = child(pom(ROOT.resolve("pom.xml")).getDocumentElement(), "version");
        assertEquals(rootVersion, child(project, "version"), "the BOM's version is the build's");
        Set<String> listed = new TreeSet<>();
        NodeList deps = bom.getElementsByTagName("dependency");
        for (int i = 0; i < deps.getLength(); i++) {
            Element d = (Element) deps.item(i);
            assertEquals("dev.redeye", child(d, "groupId"), "only redeye modules");
            assertEquals("${project.version}", child(d, "version"), child(d, "artifactId"));
            listed.add(child(d, "artifactId"));
        }
        assertTrue(listed.containsAll(published), "missing from the BOM: " + minus(published, listed));
        assertTrue(published.containsAll(minus(listed, ANNOUNCED)), "in the BOM but not a published module: "
                + minus(minus(listed, ANNOUNCED), published));
    }

    /**
     * The BOM has no parent, so it pins the plugins its own build runs itself; they must be redeye-parent's
     * versions (both builds run the enforcer's requirePluginVersions, which only checks that a version is set).
     */
    @Test
    void theBomPinsItsPluginsAtTheParentsVersions() throws Exception {
        Map<String, String> parent = pluginVersions(pom(ROOT.resolve("pom.xml")));
        Map<String, String> bom = pluginVersions(pom(ROOT.resolve("redeye-bom/pom.xml")));
        assertTrue(bom.keySet().containsAll(Set.of("maven-install-plugin", "maven-deploy-plugin", "maven-site-plugin")),
                "the BOM pins what a pom module runs: " + bom);
        for (Map.Entry<String, String> e : bom.entrySet()) {
            assertEquals(parent.get(e.getKey()), e.getValue(),
                    "version of " + e.getKey() + " in the BOM and in redeye-parent");
        }
    }

    /** artifactId to version of a pom's pluginManagement. */
    private static Map<String, String> pluginVersions(Document d) {
        Map<String, String> out = new TreeMap<>();
        NodeList managed = d.getElementsByTagName("pluginManagement");
        assertEquals(1, managed.getLength(), "one pluginManagement");
        NodeList plugins = ((Element) managed.item(0)).getElementsByTagName("plugin");
        for (int i = 0; i < plugins.getLength(); i++) {
            Element plugin = (Element) plugins.item(i);
            out.put(child(plugin, "artifactId"), child(plugin, "version"));
        }
        return out;
    }

    /**
     * The TCK README's pom fragment is what a plain project (no parent of ours) needs to run the TCK: the BOM
     * import, the TCK and JUnit Jupiter at the version the TCK is built with, the Java release, and the compiler
     * and surefire plugins at redeye-parent's pinned versions (Maven's default surefire predates JUnit 5).
     */
    @Test
    void theTckReadmesPomFragmentIsCompleteAndPinsTheParentsPluginVersions() throws Exception {
        String tck = Files.readString(ROOT.resolve("store-tck/README.md"));
        String section = tck.substring(tck.indexOf("## Use it in a store module"));
        Matcher xml = Pattern.compile("```xml\n(.*?)```", Pattern.DOTALL).matcher(section);
        assertTrue(xml.find(), "store-tck/README.md shows a pom fragment");
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        Document fragment = f.newDocumentBuilder().parse(new java.io.ByteArrayInputStream(
                ("<project>" + xml.group(1) + "</project>").getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        Document parent = pom(ROOT.resolve("pom.xml"));
        Element parentProperties = (Element) parent.getElementsByTagName("properties").item(0);

        Map<String, Element> deps = new TreeMap<>();
        NodeList list = fragment.getElementsByTagName("dependency");
        for (int i = 0; i < list.getLength(); i++) {
            Element d = (Element) list.item(i);
            deps.put(child(d, "artifactId"), d);
        }
        assertEquals("import", child(deps.get("redeye-bom"), "scope"), "the fragment imports the BOM");
        assertEquals("test", child(deps.get("redeye-store-tck"), "scope"));
        assertEquals(child(parentProperties, "junit.version"), child(deps.get("junit-jupiter"), "version"));

        String release = fragment.getElementsByTagName("maven.compiler.release").item(0).getTextContent().trim();
        NodeList parentRelease = parent.getElementsByTagName("release");
        assertEquals(parentRelease.item(0).getTextContent().trim(), release, "the Java release the TCK is built for");

        Map<String, String> pinned = pluginVersions(parent);
        Map<String, String> shown = new TreeMap<>();
        NodeList plugins = fragment.getElementsByTagName("plugin");
        for (int i = 0; i < plugins.getLength(); i++) {
            Element plugin = (Element) plugins.item(i);
            shown.put(child(plugin, "artifactId"), child(plugin, "version"));
        }
        for (String plugin : List.of("maven-compiler-plugin", "maven-surefire-plugin")) {
            assertEquals(pinned.get(plugin), shown.get(plugin), plugin + " in store-tck/README.md's pom fragment and "
                    + "in redeye-parent");
        }
    }

    private static Set<String> minus(Set<String> a, Set<String> b) {
        Set<String> out = new TreeSet<>(a);
        out.removeAll(b);
        return out;
    }

    @Test
    void theQuickStartImportsTheBomAndShowsImports() throws IOException {
        String readme = Files.readString(ROOT.resolve("README.md"));
        String quickStart = readme.substring(readme.indexOf("## Quick start"), readme.indexOf("## Permission API"));
        assertTrue(Pattern.compile("<artifactId>redeye-bom</artifactId>\\s*<version>[^<]+</version>\\s*"
                + "<type>pom</type>\\s*<scope>import</scope>").matcher(quickStart).find(), "the BOM import");
        assertTrue(quickStart.contains("import dev.redeye.CircuitBreaker;"));
        assertTrue(readme.contains("import dev.redeye.Permit;"), "the permission API section");
        assertTrue(readme.contains("import dev.redeye.micrometer.RedeyeMetrics;"), "the Micrometer section");
    }

    @Test
    void everyModuleReadmeShowsItsDependencyAndImports() throws Exception {
        int checked = 0;
        for (String m : modules()) {
            Path readme = ROOT.resolve(m).resolve("README.md");
            if (!Files.exists(readme)) {
                continue;
            }
            Document d = pom(ROOT.resolve(m).resolve("pom.xml"));
            String artifact = child(d.getDocumentElement(), "artifactId");
            String text = Files.readString(readme);
            assertTrue(Pattern.compile("<groupId>dev.redeye</groupId>\\s*<artifactId>" + Pattern.quote(artifact)
                    + "</artifactId>").matcher(text).find() || !published(d),
                    m + "/README.md shows no dependency on " + artifact);
            Matcher java = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL).matcher(text);
            boolean imports = false;
            while (java.find()) {
                imports |= java.group(1).contains("import dev.redeye.");
            }
            assertTrue(imports, m + "/README.md has no Java snippet with its imports");
            checked++;
        }
        assertTrue(checked >= 5, checked + " module READMEs checked");
        String tck = Files.readString(ROOT.resolve("store-tck/README.md"));
        String junit = child((Element) pom(ROOT.resolve("pom.xml")).getElementsByTagName("properties").item(0),
                "junit.version");
        assertTrue(Pattern.compile("<artifactId>junit-jupiter</artifactId>\\s*<version>" + Pattern.quote(junit)
                + "</version>").matcher(tck).find(),
                "store-tck/README.md names the JUnit version the TCK is built with (" + junit + ")");
    }
}
