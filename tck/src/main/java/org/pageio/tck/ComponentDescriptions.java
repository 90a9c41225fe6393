package org.pageio.tck;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URL;
import java.util.Enumeration;
import java.util.jar.Manifest;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.SAXException;

/**
 * Reads Declarative Services component descriptions outside a container: the XML files each
 * bundle jar or class folder on the class path lists in its manifest's {@code Service-Component}
 * header, as bnd writes them. {@link InProcessMethodKit} takes a method's {@code io.method}
 * property from there, where the container would take it from the service registration.
 */
final class ComponentDescriptions {

    private ComponentDescriptions() {
    }

    /**
     * The value of the property {@code name} of the component whose implementation class is
     * {@code type}, found through {@code type}'s class loader; null when no description names that
     * class, or it has no such property.
     *
     * @throws IOException when a manifest or a description it lists cannot be read
     */
    static String property(Class<?> type, String name) throws IOException {
        ClassLoader loader = type.getClassLoader() != null ? type.getClassLoader() : ClassLoader.getSystemClassLoader();
        Enumeration<URL> manifests = loader.getResources("META-INF/MANIFEST.MF");
        while (manifests.hasMoreElements()) {
            URL manifest = manifests.nextElement();
            String header;
            try (InputStream in = manifest.openStream()) {
                header = new Manifest(in).getMainAttributes().getValue("Service-Component");
            }
            if (header == null) {
                continue;
            }
            String m = manifest.toString();
            String root = m.substring(0, m.length() - "META-INF/MANIFEST.MF".length());
            for (String entry : header.split(",")) {
                String path = entry.split(";", 2)[0].strip();
                if (path.isEmpty() || path.contains("*")) {
                    continue; // bnd lists every file; a pattern would need the bundle's entries
                }
                String value = property(URI.create(root + path).toURL(), type.getName(), name);
                if (value != null) {
                    return value;
                }
            }
        }
        return null;
    }

    /** The property {@code name} of the component in {@code description} implemented by {@code className}, or null. */
    private static String property(URL description, String className, String name) throws IOException {
        Document doc;
        try (InputStream in = description.openStream()) {
            DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
            f.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
            f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            DocumentBuilder b = f.newDocumentBuilder();
            doc = b.parse(in);
        } catch (ParserConfigurationException | SAXException e) {
            throw new IOException("cannot read the component description " + description + ": " + e.getMessage(), e);
        }
        NodeList implementations = doc.getElementsByTagName("implementation");
        for (int i = 0; i < implementations.getLength(); i++) {
            Element impl = (Element) implementations.item(i);
            if (!className.equals(impl.getAttribute("class")) || !(impl.getParentNode() instanceof Element component)) {
                continue;
            }
            NodeList properties = component.getElementsByTagName("property");
            for (int j = 0; j < properties.getLength(); j++) {
                Element p = (Element) properties.item(j);
                if (name.equals(p.getAttribute("name"))) {
                    return p.hasAttribute("value") ? p.getAttribute("value") : p.getTextContent().strip();
                }
            }
        }
        return null;
    }
}
